import TierCache

extension RedisTier {
    /// The entries stored under `keys`, in the same order (`nil` for each miss).
    ///
    /// On one Redis server this is one `MGET` per ``mgetBatchSize`` keys: one command, one reply,
    /// one wake-up of the waiting task, where as many ``entry(forKey:)`` calls cost a command, a
    /// reply and a task switch each. A page that needs a dozen cached fragments reads them in
    /// about the time of one. (Larger lists are split so that no one reply holds up the
    /// connection's other commands or runs into the command timeout.) In a cluster the keys may
    /// live on several nodes (and `MGET` needs one hash slot), so they are looked up concurrently,
    /// each with its own `GET`, up to ``mgetBatchSize`` at a time, and their commands to one node
    /// still leave together (automatic pipelining).
    ///
    /// Each key counts as a lookup (hit or miss) in the tier's statistics; a record that fails to
    /// decode is a miss and is deleted, as with ``entry(forKey:)``. When Redis fails, every key
    /// is a miss, or, with ``Configuration/FailureMode/throwErrors``, the call throws.
    public func entries(forKeys keys: [CacheKey]) async throws -> [CacheEntry?] {
        guard keys.count > 1 else { return try await keys.asyncMap { try await entry(forKey: $0) } }
        guard case .standalone = configuration.deployment else {
            return try await concurrentEntries(forKeys: keys)
        }
        guard keys.count <= Self.mgetBatchSize else {
            var entries: [CacheEntry?] = []
            entries.reserveCapacity(keys.count)
            for start in stride(from: 0, to: keys.count, by: Self.mgetBatchSize) {
                entries += try await self.entries(
                    forKeys: Array(keys[start..<min(start + Self.mgetBatchSize, keys.count)]))
            }
            return entries
        }
        let timing = counters.startLookup()
        let redisKeys = keys.map(redisKey)
        let records: [DecodedRecord]
        do throws(RedisError) {
            switch try await read([Self.mget] + redisKeys, key: nil) {
            case .many(let decoded) where decoded.count == keys.count: records = decoded
            case .value(.array(let elements)) where elements.count == keys.count:
                records = elements.map(decodeRecord)
            case let reply:
                let count =
                    switch reply {
                    case .many(let decoded): "\(decoded.count) values"
                    case .value(.array(let elements)): "\(elements.count) values"
                    default: "no array"
                    }
                throw RedisError.protocolViolation("MGET of \(keys.count) keys answered \(count)")
            }
        } catch {
            for _ in keys { counters.recordLookup(hit: false, timing: timing) }
            if configuration.failureMode == .throwErrors { throw tierError(error) }
            counters.recordError()
            return Array(repeating: nil, count: keys.count)
        }
        var entries: [CacheEntry?] = []
        entries.reserveCapacity(keys.count)
        for index in keys.indices {
            entries.append(
                await entry(from: records[index], key: keys[index], redisKey: redisKeys[index], timing: timing))
        }
        return entries
    }

    /// The most keys one `MGET` asks for.
    public static let mgetBatchSize = 128

    /// One `GET` per key, at most ``mgetBatchSize`` in flight: a list of thousands sent at once
    /// queued on the connections past the command timeout, and their failures opened the node's
    /// circuit breaker.
    private func concurrentEntries(forKeys keys: [CacheKey]) async throws -> [CacheEntry?] {
        try await withThrowingTaskGroup(of: (Int, CacheEntry?).self) { group in
            var next = 0
            func startNext() {
                guard next < keys.count else { return }
                let (index, key) = (next, keys[next])
                _ = group.addTaskUnlessCancelled { (index, try await self.entry(forKey: key)) }
                next += 1
            }
            while next < min(keys.count, Self.mgetBatchSize) { startNext() }
            var entries = [CacheEntry?](repeating: nil, count: keys.count)
            for try await (index, entry) in group {
                entries[index] = entry
                startNext()
            }
            return entries
        }
    }
}

extension Array {
    /// `map` with an async transform, in order.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        results.reserveCapacity(count)
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
