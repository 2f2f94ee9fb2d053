/// Remembers, per slot of one displaying object, which load is bound to it, so that rebinding cancels the old
/// load and a late result of an old load is never shown.
///
/// Store one as a `let` in each ``ImageDisplaying`` object. Thread-safe.
public final class ImageBinder: Sendable {
    /// One of an object's images: `.image`, `.background`, or your own name.
    public struct Slot: Hashable, Sendable, CustomStringConvertible {
        /// The slot's name.
        public let name: String
        /// A slot named `name`.
        public init(_ name: String) { self.name = name }
        /// The main image.
        public static let image = Slot("image")
        /// A background image.
        public static let background = Slot("background")
        /// The name.
        public var description: String { name }
    }

    private struct Binding {
        var generation = 0
        var task: ImageTask?
        var isLoading = false
    }

    private let bindings = Locked<[Slot: Binding]>([:])

    /// A binder with nothing bound.
    public init() {}

    /// The task loading into `slot` now, if any.
    public func task(for slot: Slot = .image) -> ImageTask? {
        bindings.withLock { $0[slot]?.task }
    }

    /// Cancels every slot's load.
    public func cancelAll() {
        let tasks = bindings.withLock { all -> [ImageTask] in
            var tasks: [ImageTask] = []
            for slot in all.keys {
                all[slot]?.generation += 1
                all[slot]?.isLoading = false
                if let task = all[slot]?.task { tasks.append(task) }
                all[slot]?.task = nil
            }
            return tasks
        }
        for task in tasks { task.cancel() }
    }

    /// Starts a new binding of `slot`: cancels the previous load, returns the new generation.
    func begin(_ slot: Slot) -> Int {
        let (generation, previous) = bindings.withLock { all -> (Int, ImageTask?) in
            var binding = all[slot] ?? Binding()
            binding.generation += 1
            binding.isLoading = true
            let previous = binding.task
            binding.task = nil
            all[slot] = binding
            return (binding.generation, previous)
        }
        previous?.cancel()
        return generation
    }

    /// Remembers `task` as `slot`'s load, or cancels it if the slot was rebound meanwhile.
    func attach(_ task: ImageTask, to slot: Slot, generation: Int) {
        let isCurrent = bindings.withLock { all -> Bool in
            guard all[slot]?.generation == generation, all[slot]?.isLoading == true else { return false }
            all[slot]?.task = task
            return true
        }
        if !isCurrent, !task.isFinished { task.cancel() }
    }

    /// Ends `generation`'s load; returns whether it is still the slot's latest binding (then its result shows).
    @discardableResult
    func end(_ slot: Slot, _ generation: Int) -> Bool {
        bindings.withLock { all in
            guard all[slot]?.generation == generation, all[slot]?.isLoading == true else { return false }
            all[slot]?.isLoading = false
            all[slot]?.task = nil
            return true
        }
    }

    /// Whether `generation` is the slot's latest binding and still loading (previews may show).
    func isLoading(_ slot: Slot, _ generation: Int) -> Bool {
        bindings.withLock { $0[slot]?.generation == generation && $0[slot]?.isLoading == true }
    }
}
