import Foundation

/// Anything that shows images (a view, a layer, a terminal cell, a test double): it can be given an image for a
/// slot and holds the ``ImageBinder`` that remembers which load is bound to it.
///
/// Adopt it, then load with ``setImage(with:placeholder:failureImage:slot:pipeline:progress:completion:)``:
///
/// ```swift
/// final class Thumbnail: ImageDisplaying {
///     let imageBinder = ImageBinder()
///     var shown: ImageContainer?
///     func display(_ image: ImageContainer?, in slot: ImageBinder.Slot) { shown = image }
/// }
/// pipelineQueue.async { thumbnail.setImage(with: url, placeholder: gray, pipeline: pipeline) }
/// ```
///
/// Threading: `display` is called on the thread that calls `setImage` (placeholder, memory hit) and on the
/// pipeline's ``ImagePipeline/Configuration/callbackQueue`` (results). Call `setImage` on that queue (in an app
/// whose pipeline delivers on `.main`, on the main thread), so that every display happens on one serial queue.
public protocol ImageDisplaying: AnyObject {
    /// Shows `image` in `slot` (`nil`: show nothing).
    func display(_ image: ImageContainer?, in slot: ImageBinder.Slot)
    /// The binder remembering this object's loads; return the same instance every time (a stored `let`).
    var imageBinder: ImageBinder { get }
}

extension ImageDisplaying {
    /// Loads `request` into `slot`: shows a memory-cache hit at once (no placeholder flash), else shows
    /// `placeholder` at once and the image when it arrives — unless another `setImage` for the same slot came
    /// later (a recycled cell never shows the previous URL's image). The load bound before to this slot is
    /// cancelled.
    ///
    /// - Parameters:
    ///   - request: what to load; `nil` cancels the slot's load and shows `placeholder`.
    ///   - placeholder: shown while loading (default `nil`: the slot is cleared).
    ///   - failureImage: shown when the load fails (default `nil`: the placeholder stays).
    ///   - slot: which of the object's images (default `.image`).
    ///   - pipeline: the pipeline to load with.
    ///   - progress: bytes received, on the callback queue (default `nil`).
    ///   - completion: the result, on the callback queue (or at once for a memory hit), only if still bound.
    /// - Returns: the task, or `nil` when nothing is loading (memory hit or no request).
    @discardableResult
    public func setImage(
        with request: ImageRequest?, placeholder: ImageContainer? = nil, failureImage: ImageContainer? = nil,
        slot: ImageBinder.Slot = .image, pipeline: ImagePipeline,
        progress: (@Sendable (ImageTask.Progress) -> Void)? = nil,
        completion: (@Sendable (Result<ImageResponse, ImagePipeline.Error>) -> Void)? = nil
    ) -> ImageTask? {
        let binder = imageBinder
        let generation = binder.begin(slot)
        guard let request else {
            display(placeholder, in: slot)
            return nil
        }
        if let response = pipeline.cachedResponse(for: request) {
            binder.end(slot, generation)
            display(response.image, in: slot)
            completion?(.success(response))
            return nil
        }
        display(placeholder, in: slot)
        let target = WeakDisplay(self)
        let task = pipeline.loadImage(with: request, progress: progress) { result in
            guard binder.end(slot, generation), let object = target.object else { return }
            switch result {
            case .success(let response): object.display(response.image, in: slot)
            case .failure: if let failureImage { object.display(failureImage, in: slot) }
            }
            completion?(result)
        }
        binder.attach(task, to: slot, generation: generation)
        if request.options.contains(.deliversPreviews) {
            let queue = pipeline.configuration.callbackQueue
            let events = task.events
            Task {
                for await event in events {
                    guard case .preview(let image) = event else { continue }
                    queue.async {
                        guard binder.isLoading(slot, generation), let object = target.object else { return }
                        object.display(image, in: slot)
                    }
                }
            }
        }
        return task
    }

    /// Loads the image at `url` into `slot` (see the request variant).
    @discardableResult
    public func setImage(
        with url: URL?, placeholder: ImageContainer? = nil, failureImage: ImageContainer? = nil,
        slot: ImageBinder.Slot = .image, pipeline: ImagePipeline,
        completion: (@Sendable (Result<ImageResponse, ImagePipeline.Error>) -> Void)? = nil
    ) -> ImageTask? {
        setImage(
            with: url.map { ImageRequest(url: $0) }, placeholder: placeholder, failureImage: failureImage, slot: slot,
            pipeline: pipeline, completion: completion)
    }

    /// Cancels the load bound to `slot` (default `.image`); what is shown stays.
    public func cancelImageLoad(slot: ImageBinder.Slot = .image) {
        _ = imageBinder.begin(slot)
    }
}

/// A weak reference to a display, carried to the callback queue.
// @unchecked Sendable: `object` is only dereferenced on the callback queue, which is where the caller also calls
// `setImage` (the documented contract of ImageDisplaying), so the object is only ever used from one queue.
private final class WeakDisplay: @unchecked Sendable {
    weak var object: (any ImageDisplaying)?
    init(_ object: any ImageDisplaying) { self.object = object }
}
