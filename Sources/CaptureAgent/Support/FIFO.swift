/// A first-in, first-out queue whose `removeFirst()` costs O(1) amortized.
///
/// `Array.removeFirst()` moves every remaining element. The agent's event
/// queue is drained from the front by the writer and trimmed from the
/// front by `submit` when full, both under the queue's lock: with a backlog
/// of thousands of events (a fast client, an inspector reading slower than
/// events arrive) those moves took most of the agent's time, and held the
/// app's threads waiting on the lock.
///
/// ```swift
/// var queue = FIFO<Int>()
/// queue.append(1)
/// queue.append(2)
/// let first = queue.removeFirst()  // 1
/// ```
struct FIFO<Element> {
    /// Removed slots at the front are nil (so their elements are released)
    /// until there are enough of them to be worth one compaction.
    private var storage: [Element?] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }

    /// The element `index` places from the front.
    subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count, "FIFO index out of range")
        return storage[head + index]!
    }

    /// Changes the element `index` places from the front in place.
    mutating func update<Result>(at index: Int, _ body: (inout Element) -> Result) -> Result {
        precondition(index >= 0 && index < count, "FIFO index out of range")
        return body(&storage[head + index]!)
    }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    /// Removes and returns the oldest element; the queue must not be empty.
    @discardableResult
    mutating func removeFirst() -> Element {
        precondition(!isEmpty, "removeFirst() on an empty FIFO")
        let element = storage[head].take()!
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    mutating func removeAll() {
        storage.removeAll()
        head = 0
    }
}
