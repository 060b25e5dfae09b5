import Dispatch

/// A value that lives on one serial queue, carried through a closure that may run elsewhere
/// (another queue's work, a `queue.async` hop) and opened only on its queue: the check traps a
/// wrong-queue access instead of letting it race, which is what makes it `Sendable`.
struct QueueBound<Value>: @unchecked Sendable {
    let queue: DispatchQueue
    private let bound: Value

    init(_ value: Value, on queue: DispatchQueue) {
        self.bound = value
        self.queue = queue
    }

    /// The value; on `queue` only.
    var value: Value {
        dispatchPrecondition(condition: .onQueue(queue))
        return bound
    }
}
