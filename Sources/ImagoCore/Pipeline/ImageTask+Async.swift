extension ImageTask {
    /// The task's result, awaited: returns the response or throws the failure (``ImagePipeline/Error/cancelled``
    /// once the task is cancelled). Cancelling the awaiting Swift task cancels this task. Can be awaited any number
    /// of times, before or after the task finished.
    ///
    /// - Throws: ``ImagePipeline/Error``.
    public var response: ImageResponse {
        get async throws(ImagePipeline.Error) {
            let events = events
            let result = await withTaskCancellationHandler {
                () async -> Result<ImageResponse, ImagePipeline.Error> in
                for await event in events {
                    if case .finished(let result) = event { return result }
                }
                return .failure(.cancelled)
            } onCancel: {
                cancel()
            }
            return try result.get()
        }
    }

    /// The task's final image, awaited (see ``response``).
    ///
    /// - Throws: ``ImagePipeline/Error``.
    public var image: ImageContainer {
        get async throws(ImagePipeline.Error) { try await response.image }
    }

    /// The progressive previews, in order, ending when the task finishes (only requests with
    /// ``ImageRequest/Options/deliversPreviews`` have any). Each access makes a new sequence that first replays the
    /// previews delivered so far.
    public var previews: some AsyncSequence<ImageContainer, Never> {
        events.compactMap { event -> ImageContainer? in
            if case .preview(let image) = event { return image }
            return nil
        }
    }
}
