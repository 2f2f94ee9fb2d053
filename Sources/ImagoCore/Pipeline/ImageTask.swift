import Dispatch
import Foundation

/// A running request: cancel it, change its priority, watch its progress and events.
///
/// Returned by ``ImagePipeline/loadImage(with:progress:updated:completion:)``; the async API makes one internally.
/// Thread-safe. After ``cancel()`` is called on the pipeline's callback queue, no callback follows (called from
/// another thread, a callback that is already starting may still run).
///
/// ```swift
/// let task = pipeline.loadImage(with: request) { result in print(result) }
/// task.priority = .high
/// for await event in task.events { if case .finished = event { break } }
/// ```
public final class ImageTask: Sendable, Hashable, CustomStringConvertible {
    /// Bytes of the encoded image received so far.
    public struct Progress: Sendable, Hashable {
        /// Bytes received.
        public var completed: Int64
        /// Bytes expected, when the server said (`Content-Length`).
        public var total: Int64?

        /// Progress from its two figures.
        public init(completed: Int64, total: Int64?) {
            self.completed = completed
            self.total = total
        }

        /// `completed / total`, or 0 when the total is unknown.
        public var fraction: Double {
            guard let total, total > 0 else { return 0 }
            return min(1, Double(completed) / Double(total))
        }
    }

    /// Something that happened to the task.
    public enum Event: Sendable {
        /// More bytes arrived.
        case progress(Progress)
        /// A progressive preview (only with ``ImageRequest/Options/deliversPreviews``).
        case preview(ImageContainer)
        /// The result. The stream ends after it, unless an update may follow (see ``updated(_:)``).
        case finished(Result<ImageResponse, ImagePipeline.Error>)
        /// The stale image delivered in `finished` was revalidated and the server sent a new one (only with
        /// ``ImageRequest/Options/deliversUpdates``). The stream ends after it, or when revalidation ends without one.
        case updated(ImageResponse)
    }

    private enum Phase { case running, awaitingUpdate, done }

    private struct State {
        var priority: RequestPriority
        var progress = Progress(completed: 0, total: nil)
        var phase = Phase.running
        var wasCancelled = false
        /// Set by every `cancel()` call: queued callbacks check it before running.
        var cancelCalled = false
        var subscription: WorkSubscription?
        var continuations: [Int: AsyncStream<Event>.Continuation] = [:]
        /// The revalidated image delivered by ``deliverUpdate(_:)``, replayed to streams obtained afterwards.
        var update: ImageResponse?
        var nextContinuationID = 0
        var result: Result<ImageResponse, ImagePipeline.Error>?
    }

    /// What the task calls, and where.
    struct Handlers: Sendable {
        /// `nil`: called inline on the producing thread (the async API).
        var queue: DispatchQueue?
        var progress: (@Sendable (Progress) -> Void)?
        var completion: (@Sendable (Result<ImageResponse, ImagePipeline.Error>) -> Void)?
        var updated: (@Sendable (ImageResponse) -> Void)?
        /// The async API resumes its continuation with `.cancelled`; callbacks are never called after cancel.
        var reportsCancellation = false
    }

    /// A number unique within the process.
    public let id: Int
    /// The request as started.
    public let request: ImageRequest
    let startTime: ContinuousClock.Instant
    private let state: Locked<State>
    private let handlers: Handlers

    init(id: Int, request: ImageRequest, handlers: Handlers) {
        self.id = id
        self.request = request
        self.handlers = handlers
        startTime = .now
        state = Locked(State(priority: request.priority))
    }

    /// The priority; setting it re-prioritises the task's work (shared work runs at its subscribers' highest).
    public var priority: RequestPriority {
        get { state.withLock { $0.priority } }
        set {
            let subscription = state.withLock { s -> WorkSubscription? in
                s.priority = newValue
                return s.phase == .running ? s.subscription : nil
            }
            subscription?.setPriority(newValue)
        }
    }

    /// The latest progress.
    public var progress: Progress { state.withLock { $0.progress } }

    /// Whether the task has delivered its result or was cancelled.
    public var isFinished: Bool { state.withLock { $0.phase != .running } }

    /// Whether ``cancel()`` was called before the task finished.
    public var isCancelled: Bool { state.withLock { $0.wasCancelled } }

    /// The task's events from now on (a stream obtained after the task finished yields only `.finished`, then
    /// `.updated` when a revalidated image was delivered). Each
    /// access makes a new stream; every stream receives every later event.
    public var events: AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream()
        state.withLock { s in
            switch s.phase {
            case .running, .awaitingUpdate:
                if let result = s.result { continuation.yield(.finished(result)) }
                let id = s.nextContinuationID
                s.nextContinuationID += 1
                s.continuations[id] = continuation
            case .done:
                if let result = s.result { continuation.yield(.finished(result)) }
                if let update = s.update { continuation.yield(.updated(update)) }
                continuation.finish()
            }
        }
        return stream
    }

    /// Cancels the task: its share of any work is released (work shared with other tasks goes on), the event
    /// streams end with `.finished(.failure(.cancelled))`, and no callback is called afterwards. Idempotent.
    public func cancel() {
        let (subscription, wasRunning) = state.withLock { s -> (WorkSubscription?, Bool) in
            s.cancelCalled = true
            guard s.phase != .done else { return (nil, false) }
            let wasRunning = s.phase == .running
            s.phase = .done
            s.wasCancelled = wasRunning
            if wasRunning {
                s.result = .failure(.cancelled)
                for c in s.continuations.values { c.yield(.finished(.failure(.cancelled))) }
            }
            for c in s.continuations.values { c.finish() }
            s.continuations = [:]
            let sub = s.subscription
            s.subscription = nil
            return (sub, wasRunning)
        }
        subscription?.unsubscribe()
        if wasRunning, handlers.reportsCancellation, let completion = handlers.completion {
            completion(.failure(.cancelled))
        }
    }

    // MARK: - Delivery (called by the pipeline)

    /// Stores the subscription; releases it at once if the task was cancelled meanwhile.
    func attach(_ subscription: WorkSubscription) {
        let keep = state.withLock { s -> Bool in
            guard s.phase == .running else { return false }
            s.subscription = subscription
            return true
        }
        if !keep { subscription.unsubscribe() }
    }

    func deliverProgress(_ progress: Progress) {
        state.withLock { s in
            guard s.phase == .running else { return }
            s.progress = progress
            for c in s.continuations.values { c.yield(.progress(progress)) }
            if let handler = handlers.progress { _call { handler(progress) } }
        }
    }

    func deliverPreview(_ image: ImageContainer) {
        state.withLock { s in
            guard s.phase == .running else { return }
            for c in s.continuations.values { c.yield(.preview(image)) }
        }
    }

    /// Delivers the result; `awaitsUpdate` keeps the event streams open for an ``Event/updated(_:)``.
    func deliverResult(_ result: Result<ImageResponse, ImagePipeline.Error>, awaitsUpdate: Bool) {
        let inline = state.withLock { s -> (@Sendable () -> Void)? in
            guard s.phase == .running else { return nil }
            s.phase = awaitsUpdate ? .awaitingUpdate : .done
            s.result = result
            s.subscription = nil
            for c in s.continuations.values { c.yield(.finished(result)) }
            if !awaitsUpdate {
                for c in s.continuations.values { c.finish() }
                s.continuations = [:]
            }
            guard let completion = handlers.completion else { return nil }
            if handlers.queue == nil { return { completion(result) } }
            _call { completion(result) }
            return nil
        }
        inline?()
    }

    /// Delivers a revalidated image (or, with `nil`, ends the wait for one).
    func deliverUpdate(_ response: ImageResponse?) {
        state.withLock { s in
            guard s.phase == .awaitingUpdate else { return }
            s.phase = .done
            s.update = response
            for c in s.continuations.values {
                if let response { c.yield(.updated(response)) }
                c.finish()
            }
            s.continuations = [:]
            if let response, let updated = handlers.updated { _call { updated(response) } }
        }
    }

    /// Queues a callback on the callback queue, checking there that the task was not cancelled meanwhile.
    /// (Lock held: enqueueing under the lock keeps a task's callbacks in order.)
    private func _call(_ body: @escaping @Sendable () -> Void) {
        guard let queue = handlers.queue else { return body() }
        queue.async { [self] in
            guard !state.withLock({ $0.cancelCalled }) else { return }
            body()
        }
    }

    /// Tasks are equal when they are the same task.
    public static func == (lhs: ImageTask, rhs: ImageTask) -> Bool { lhs === rhs }
    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// `ImageTask(id, request)`.
    public var description: String { "ImageTask(\(id), \(request))" }
}
