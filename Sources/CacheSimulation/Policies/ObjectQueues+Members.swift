extension ObjectQueues {
    /// The objects of `queue` from the head (newest) to the tail (oldest). O(n): for tests and
    /// debugging, never on a replay's path.
    func members(of queue: UInt8) -> [UInt32] {
        var result: [UInt32] = []
        var cursor = tail(queue)
        while let object = cursor {
            result.append(object)
            cursor = newer(than: object)
        }
        return result.reversed()
    }
}
