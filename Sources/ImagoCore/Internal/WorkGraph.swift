import Foundation

/// One step in the life of a piece of shared work, as its subscribers see it.
enum WorkEvent<Value: Sendable>: Sendable {
    /// Bytes received so far and the total expected, when known.
    case progress(completed: Int64, total: Int64?)
    /// All bytes received so far (only for loads that report partial data).
    case partialData(Data)
    /// A progressive preview.
    case preview(ImageContainer)
    /// The result; terminal.
    case value(Value)
    /// The failure; terminal.
    case failure(ImagePipeline.Error)

    var isTerminal: Bool {
        switch self {
        case .value, .failure: true
        default: false
        }
    }
}

/// A piece of work shared by every identical request in flight (a load, a decode, one processor prefix).
///
/// The work is cancelled when its last subscriber leaves, and runs at the highest priority among its subscribers.
final class WorkNode<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: every `var` below is read and written only while `WorkGraph.lock` is held.
    struct Subscriber {
        var priority: RequestPriority
        let handler: @Sendable (WorkEvent<Value>) -> Void
    }

    let key: WorkKey
    var subscribers: [Int: Subscriber] = [:]
    var nextSubscriberID = 0
    var priority: RequestPriority
    /// Finished, failed or cancelled: no more events are delivered.
    var isDone = false
    var isCancelled = false
    /// Every handler registered: work is started in steps on several threads (disk read, then load …), and a
    /// later step must not replace an earlier one's handler before it is known which runs.
    var cancelHandlers: [@Sendable () -> Void] = []
    var priorityHandlers: [@Sendable (RequestPriority) -> Void] = []

    init(key: WorkKey, priority: RequestPriority) {
        self.key = key
        self.priority = priority
    }

    fileprivate func _maxPriority() -> RequestPriority {
        subscribers.values.map(\.priority).max() ?? priority
    }
}

/// A subscriber's handle on a piece of shared work: leave it, or change this subscriber's priority.
struct WorkSubscription: Sendable {
    let unsubscribe: @Sendable () -> Void
    let setPriority: @Sendable (RequestPriority) -> Void
}

/// The registry of work in flight, coordinated by one lock: the pipeline's one coalescer.
///
/// It decides what runs (one node per key, shared by its subscribers), never when: nodes run their stage's
/// closure on a ``WorkQueue``, which bounds and orders them.
///
/// Nodes are created on first subscription and started outside the lock; events are copied out under the lock and
/// delivered after it is released, so no handler ever runs while the lock is held.
// @unchecked Sendable: the registry holds `WorkNode`s (classes with mutable fields, not Sendable), and every node
// field is read and written only while `lock` is held.
final class WorkGraph: @unchecked Sendable {
    private let lock = Locked<[WorkKey: AnyObject]>([:])

    /// Subscribes `handler` to the work named `key`, creating it (and calling `start` once, outside the lock) when
    /// none is in flight or `coalesces` is `false`. Returns the subscription and whether an existing node was joined.
    func subscribe<Value: Sendable>(
        key: WorkKey, coalesces: Bool, priority: RequestPriority,
        handler: @escaping @Sendable (WorkEvent<Value>) -> Void,
        start: (WorkNode<Value>) -> Void
    ) -> (WorkSubscription, joined: Bool) {
        var raise: [@Sendable (RequestPriority) -> Void] = []
        let (node, id, isNew) = lock.withLock { registry -> (WorkNode<Value>, Int, Bool) in
            var isNew = false
            let node: WorkNode<Value>
            if coalesces, let existing = registry[key] as? WorkNode<Value>, !existing.isDone {
                node = existing
            } else {
                node = WorkNode(key: key, priority: priority)
                if coalesces { registry[key] = node }
                isNew = true
            }
            let id = node.nextSubscriberID
            node.nextSubscriberID += 1
            node.subscribers[id] = WorkNode.Subscriber(priority: priority, handler: handler)
            if !isNew, priority > node.priority {
                node.priority = priority
                raise = node.priorityHandlers
            }
            return (node, id, isNew)
        }
        for handler in raise { handler(priority) }
        if isNew { start(node) }
        let subscription = WorkSubscription(
            unsubscribe: { [self] in unsubscribe(node, id) },
            setPriority: { [self] p in setPriority(node, id, p) })
        return (subscription, !isNew)
    }

    /// Delivers `event` to every subscriber; a terminal event ends the node (later events are dropped).
    func emit<Value: Sendable>(_ node: WorkNode<Value>, _ event: WorkEvent<Value>) {
        // The subscribers are copied out whole: an array of the handlers' function type, built in this generic
        // context, had its type metadata looked up by mangled name (demangled) on every call.
        let subscribers = lock.withLock { registry -> [WorkNode<Value>.Subscriber] in
            guard !node.isDone else { return [] }
            let subscribers = Array(node.subscribers.values)
            if event.isTerminal {
                node.isDone = true
                node.subscribers = [:]
                node.cancelHandlers = []
                node.priorityHandlers = []
                if registry[node.key] === node { registry[node.key] = nil }
            }
            return subscribers
        }
        for subscriber in subscribers { subscriber.handler(event) }
    }

    /// Adds to what cancels the node's work; runs it at once if the node was already cancelled.
    func onCancel<Value: Sendable>(_ node: WorkNode<Value>, _ handler: @escaping @Sendable () -> Void) {
        let runNow = lock.withLock { _ -> Bool in
            if node.isCancelled { return true }
            if !node.isDone { node.cancelHandlers.append(handler) }
            return false
        }
        if runNow { handler() }
    }

    /// Adds to what follows the node's priority (the loader task, queued work, the dependency).
    func onPriorityChange<Value: Sendable>(
        _ node: WorkNode<Value>, _ handler: @escaping @Sendable (RequestPriority) -> Void
    ) {
        lock.withLock { _ in if !node.isDone { node.priorityHandlers.append(handler) } }
    }

    /// The node's current priority (the highest of its subscribers).
    func priority<Value: Sendable>(of node: WorkNode<Value>) -> RequestPriority {
        lock.withLock { _ in node.priority }
    }

    /// Whether the node was cancelled (its last subscriber left).
    func isCancelled<Value: Sendable>(_ node: WorkNode<Value>) -> Bool {
        lock.withLock { _ in node.isCancelled }
    }

    /// How many nodes are in flight (for tests and statistics).
    var inFlightCount: Int { lock.withLock { $0.count } }

    private func unsubscribe<Value: Sendable>(_ node: WorkNode<Value>, _ id: Int) {
        var cancel: [@Sendable () -> Void] = []
        var change: [@Sendable (RequestPriority) -> Void] = []
        var newPriority = RequestPriority.normal
        lock.withLock { registry in
            guard !node.isDone, node.subscribers.removeValue(forKey: id) != nil else { return }
            if node.subscribers.isEmpty {
                node.isDone = true
                node.isCancelled = true
                cancel = node.cancelHandlers
                node.cancelHandlers = []
                node.priorityHandlers = []
                if registry[node.key] === node { registry[node.key] = nil }
            } else {
                newPriority = node._maxPriority()
                if newPriority != node.priority {
                    node.priority = newPriority
                    change = node.priorityHandlers
                }
            }
        }
        for handler in cancel { handler() }
        for handler in change { handler(newPriority) }
    }

    private func setPriority<Value: Sendable>(_ node: WorkNode<Value>, _ id: Int, _ priority: RequestPriority) {
        var change: [@Sendable (RequestPriority) -> Void] = []
        var newPriority = priority
        lock.withLock { _ in
            guard !node.isDone, node.subscribers[id] != nil else { return }
            node.subscribers[id]?.priority = priority
            newPriority = node._maxPriority()
            if newPriority != node.priority {
                node.priority = newPriority
                change = node.priorityHandlers
            }
        }
        for handler in change { handler(newPriority) }
    }
}
