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
        /// Stream deliveries waiting to be made, in order, by the one thread draining them outside the lock.
        var outbox = DeliveryQueue<(AsyncStream<Event>.Continuation, Delivery)>()
        /// Every event so far, replayed to each stream obtained later, so that nothing between creating the task
        /// and subscribing is missed (a run of progress events is kept as its latest).
        var history: [Event] = []

        /// Queues `delivery` for every open stream (made by the caller after unlocking, see `drainOutbox`).
        mutating func post(_ delivery: Delivery) {
            if case .yield(let event) = delivery {
                if case .progress = event, let last = history.last, case .progress = last {
                    history[history.count - 1] = event
                } else {
                    history.append(event)
                }
            }
            for c in continuations.values { outbox.post((c, delivery)) }
        }
    }

    // One event for one stream, or its end.
    private enum Delivery {
        case yield(Event)
        case finish
    }

    /// What the task calls, and where.
    struct Handlers: Sendable {
        /// `nil`: called on the producing thread once the task's lock is released (the pipeline's own handlers).
        var queue: DispatchQueue?
        var progress: (@Sendable (Progress) -> Void)?
        var completion: (@Sendable (Result<ImageResponse, ImagePipeline.Error>) -> Void)?
        var updated: (@Sendable (ImageResponse) -> Void)?
        /// The async API resumes its continuation with `.cancelled`; callbacks are never called after cancel.
        var reportsCancellation = false
        /// Called once, outside the lock, when the task stops running (result delivered or cancelled): the
        /// pipeline's count of tasks in flight.
        var onEnd: (@Sendable (ImageTask) -> Void)?
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

    /// The task's events since it was created: every stream first replays what already happened (the latest
    /// progress of each run of progress events, previews, `.finished`, `.updated`), then receives every later
    /// event, so nothing between creating the task and subscribing is missed. Each access makes a new stream.
    public var events: AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream()
        state.withLock { s in
            // Yielding under the lock is safe here: the stream is new, so no consumer can be waiting on it yet.
            for event in s.history { continuation.yield(event) }
            switch s.phase {
            case .running, .awaitingUpdate:
                let id = s.nextContinuationID
                s.nextContinuationID += 1
                s.continuations[id] = continuation
            case .done:
                continuation.finish()
            }
        }
        return stream
    }

    /// Cancels the task: its share of any work is released (work shared with other tasks goes on), the event
    /// streams end with `.finished(.failure(.cancelled))`, and no callback is called afterwards. Idempotent.
    public func cancel() {
        let (subscription, wasRunning) = withLockThenDeliver { s -> (WorkSubscription?, Bool) in
            s.cancelCalled = true
            guard s.phase != .done else { return (nil, false) }
            let wasRunning = s.phase == .running
            s.phase = .done
            s.wasCancelled = wasRunning
            if wasRunning {
                s.result = .failure(.cancelled)
                s.post(.yield(.finished(.failure(.cancelled))))
            }
            s.post(.finish)
            s.continuations = [:]
            let sub = s.subscription
            s.subscription = nil
            return (sub, wasRunning)
        }
        subscription?.unsubscribe()
        if wasRunning { handlers.onEnd?(self) }
        if wasRunning, handlers.reportsCancellation, let completion = handlers.completion {
            completion(.failure(.cancelled))
        }
    }

    /// Ends a running task with `.cancelled` delivered as its result, to callbacks too (the pipeline's
    /// ``ImagePipeline/invalidate()``: a load in flight ends, and its caller hears of it). Does nothing when
    /// the task has already finished.
    func finishCancelled() {
        let subscription = state.withLock { s -> WorkSubscription? in
            guard s.phase == .running else { return nil }
            defer { s.subscription = nil }
            return s.subscription
        }
        deliverResult(.failure(.cancelled), awaitsUpdate: false)
        subscription?.unsubscribe()
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
        deliverThenCall { s in
            guard s.phase == .running else { return nil }
            s.progress = progress
            s.post(.yield(.progress(progress)))
            guard let handler = handlers.progress else { return nil }
            return _call { handler(progress) }
        }
    }

    func deliverPreview(_ image: ImageContainer) {
        withLockThenDeliver { s in
            guard s.phase == .running else { return }
            s.post(.yield(.preview(image)))
        }
    }

    /// Delivers the result; `awaitsUpdate` keeps the event streams open for an ``Event/updated(_:)``.
    func deliverResult(_ result: Result<ImageResponse, ImagePipeline.Error>, awaitsUpdate: Bool) {
        var ended = false
        defer { if ended { handlers.onEnd?(self) } }
        deliverThenCall { s in
            guard s.phase == .running else { return nil }
            ended = true
            s.phase = awaitsUpdate ? .awaitingUpdate : .done
            s.result = result
            s.subscription = nil
            s.post(.yield(.finished(result)))
            if !awaitsUpdate {
                s.post(.finish)
                s.continuations = [:]
            }
            guard let completion = handlers.completion else { return nil }
            return _call { completion(result) }
        }
    }

    /// Delivers a revalidated image (or, with `nil`, ends the wait for one).
    func deliverUpdate(_ response: ImageResponse?) {
        deliverThenCall { s in
            guard s.phase == .awaitingUpdate else { return nil }
            s.phase = .done
            s.update = response
            if let response { s.post(.yield(.updated(response))) }
            s.post(.finish)
            s.continuations = [:]
            guard let response, let updated = handlers.updated else { return nil }
            return _call { updated(response) }
        }
    }

    /// Runs `body` under the lock, then makes the stream deliveries it posted (see ``drainOutbox()``).
    @discardableResult
    private func withLockThenDeliver<R>(_ body: (inout State) -> R) -> R {
        let (result, drains) = state.withLock { s in
            let result = body(&s)
            return (result, s.outbox.claimDrain())
        }
        if drains { drainOutbox() }
        return result
    }

    /// ``withLockThenDeliver(_:)`` for a delivery that may hand back a handler (from ``_call(_:)``), called last,
    /// after the lock is released and the stream deliveries are made.
    private func deliverThenCall(_ body: (inout State) -> (@Sendable () -> Void)?) {
        withLockThenDeliver(body)?()
    }

    /// Makes the queued stream deliveries, in order, outside the lock, until none is left. Yielding under the
    /// lock could deadlock: a yield resumes the consuming task, which takes that task's status lock, while that
    /// task's cancellation handler holds its status lock and calls ``cancel()``, which takes this lock. Only one
    /// thread drains at a time (a ``DeliveryQueue``), so every stream sees its events in the order posted; a
    /// thread that posts while another drains returns at once and the drainer delivers its events.
    private func drainOutbox() {
        state.drain({ $0.outbox.next() }) { continuation, delivery in
            switch delivery {
            case .yield(let event): continuation.yield(event)
            case .finish: continuation.finish()
            }
        }
    }

    /// Queues a callback on the callback queue, checking there that the task was not cancelled meanwhile, and
    /// returns nil; with no queue (the pipeline's own handlers), returns the callback for the caller to run once
    /// it has released the lock. (Lock held: enqueueing under the lock keeps a task's callbacks in order.)
    private func _call(_ body: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        guard let queue = handlers.queue else { return body }
        queue.async { [self] in
            guard !state.withLock({ $0.cancelCalled }) else { return }
            body()
        }
        return nil
    }

    /// Tasks are equal when they are the same task.
    public static func == (lhs: ImageTask, rhs: ImageTask) -> Bool { lhs === rhs }
    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// `ImageTask(id, request)`.
    public var description: String { "ImageTask(\(id), \(request))" }
}
