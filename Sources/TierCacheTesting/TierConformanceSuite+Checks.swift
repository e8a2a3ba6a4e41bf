import Foundation
import TierCache

extension TierConformanceSuite {
    /// The state one check runs with, and the checks themselves.
    struct Context: Sendable {
        let check: Check
        let directory: URL
        /// The clock the tiers read, when they read the suite's (the suite may move it).
        let clock: ManualCacheClock?
        let makeTier: @Sendable (URL) async throws -> any CacheTier

        // Dates every clock base holds exactly (seconds since 1970 or 2001, in a Double): the
        // round trip compares them exactly, and one taken from `Date()` lost its last bit in half
        // the runs through a tier that stores seconds since 1970.
        let storedAt = Date(timeIntervalSince1970: 1_700_000_000.125)
        private let farExpiry = Date(timeIntervalSince1970: 4_000_000_000.5)

        init(
            check: Check, directory: URL, clock: ManualCacheClock?,
            makeTier: @escaping @Sendable (URL) async throws -> any CacheTier
        ) {
            self.check = check
            self.directory = directory
            self.clock = clock
            self.makeTier = makeTier
        }

        func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
            if !condition { throw Failure(check: check, message: message()) }
        }

        func key(_ text: String) throws -> CacheKey { try CacheKey(text) }

        /// Fails the check, with what to do, when a limit the tier reports is more than the suite
        /// writes (``TierConformanceSuite/largestExercisedBytes``): a tier bounded by a count alone,
        /// or of unknown capacity (`Int.max`), would have the suite allocate that much, or
        /// overflow, rather than fail.
        func expectExercisable(_ bytes: Int, _ what: String) throws {
            try expect(
                bytes <= TierConformanceSuite.largestExercisedBytes,
                "the tier's \(what), \(bytes) bytes, is more than the suite writes "
                    + "(\(TierConformanceSuite.largestExercisedBytes) at most): make the tier with a test capacity "
                    + "(1 MiB to 64 MiB keep the suite quick)")
        }

        /// Stores `entry` under `key` in `tier`, again when an eviction policy's admission rule
        /// kept it out (`StoreOutcome.refused(.notAdmitted)`): a policy may admit an entry on its
        /// second or third store only (a doorkeeper, "cache on second hit"), and no check here is
        /// about admission.
        func store(_ entry: CacheEntry, forKey key: CacheKey, in tier: any CacheTier) async throws -> StoreOutcome {
            var outcome = StoreOutcome.stored
            for _ in 0..<3 {
                outcome = try await tier.store(entry, forKey: key)
                guard case .refused(.notAdmitted) = outcome else { return outcome }
            }
            return outcome
        }

        func entry(_ value: [UInt8], expiresAt: Date? = nil) -> CacheEntry {
            CacheEntry(value: value, storedAt: storedAt, expiresAt: expiresAt)
        }

        func roundTrip() async throws {
            let tier = try await makeTier(directory)
            let stored = entry(Array("hello, tier".utf8), expiresAt: farExpiry)
            let outcome = try await store(stored, forKey: key("a"), in: tier)
            try expect(outcome == .stored, "storing a small entry gave \(outcome)")
            let found = try await tier.entry(forKey: key("a"))
            try expect(found == stored, "read back \(String(describing: found)), stored \(stored)")
            let absent = try await tier.entry(forKey: key("absent"))
            try expect(absent == nil, "an absent key returned \(String(describing: absent))")
            let usage = try await tier.usage()
            try expect(usage.entries == 1, "usage counts \(usage.entries) entries after one store")
            try expect(
                usage.bytes > 0 && usage.bytes <= usage.capacity,
                "usage reports \(usage.bytes) of \(usage.capacity) bytes")
        }

        func emptyValue() async throws {
            let tier = try await makeTier(directory)
            _ = try await store(entry([]), forKey: key("empty"), in: tier)
            let found = try await tier.entry(forKey: key("empty"))
            try expect(found?.value == [], "an empty value read back as \(String(describing: found))")
        }

        func overwrite() async throws {
            let tier = try await makeTier(directory)
            // What the tier counts before holding anything (a disk tier's dictionary, say).
            let empty = try await tier.usage()
            _ = try await store(entry(Array("first".utf8)), forKey: key("k"), in: tier)
            _ = try await store(entry(Array("second".utf8)), forKey: key("k"), in: tier)
            let found = try await tier.entry(forKey: key("k"))
            try expect(found?.value == Array("second".utf8), "overwrite read back \(String(describing: found))")
            let entries = try await tier.usage().entries
            try expect(entries == 1, "\(entries) entries after overwriting one key")
            // The overwritten entry's bytes went with it: removing the key leaves nothing counted.
            try await tier.removeEntry(forKey: key("k"))
            let usage = try await tier.usage()
            try expect(
                usage.entries == 0 && usage.bytes == empty.bytes,
                "usage after overwriting a key and removing it: \(usage), \(empty.bytes) bytes when made (the overwritten entry's bytes are still counted)"
            )
        }

        func remove() async throws {
            let tier = try await makeTier(directory)
            // What the tier counts before holding anything (a dictionary it was given, say).
            let empty = try await tier.usage()
            _ = try await store(entry([1, 2, 3]), forKey: key("k"), in: tier)
            try await tier.removeEntry(forKey: key("k"))
            let found = try await tier.entry(forKey: key("k"))
            try expect(found == nil, "a removed key still returned \(String(describing: found))")
            try await tier.removeEntry(forKey: key("never-stored"))
            let usage = try await tier.usage()
            try expect(
                usage.entries == 0 && usage.bytes == empty.bytes,
                "usage after removing everything: \(usage), \(empty.bytes) bytes when made")
        }

        func removeAll() async throws {
            let tier = try await makeTier(directory)
            let empty = try await tier.usage()
            for index in 0..<20 { _ = try await store(entry([UInt8(index)]), forKey: key("k\(index)"), in: tier) }
            try await tier.removeAll()
            for index in 0..<20 {
                let found = try await tier.entry(forKey: key("k\(index)"))
                try expect(found == nil, "k\(index) survived removeAll")
            }
            let usage = try await tier.usage()
            try expect(
                usage.entries == 0 && usage.bytes == empty.bytes,
                "usage after removeAll: \(usage), \(empty.bytes) bytes when made")
            // The emptied tier works as a new one: what it keeps afterwards reads back, and is
            // accounted from zero (a tier that kept a stale total, or stale slots, fails here).
            for index in 0..<20 {
                _ = try await store(entry([UInt8(index), 1]), forKey: key("k\(index)"), in: tier)
            }
            for index in 0..<20 {
                let found = try await tier.entry(forKey: key("k\(index)"))
                try expect(
                    found?.value == [UInt8(index), 1],
                    "k\(index) read back as \(String(describing: found)) after removeAll")
            }
            let refilled = try await tier.usage()
            try expect(
                refilled.entries == 20 && refilled.bytes > 0 && refilled.bytes <= refilled.capacity,
                "usage after storing 20 entries into an emptied tier: \(refilled)")
            for index in 0..<20 { try await tier.removeEntry(forKey: key("k\(index)")) }
            let emptied = try await tier.usage()
            try expect(
                emptied.entries == 0 && emptied.bytes == usage.bytes,
                "usage after removing what was stored since: \(emptied), \(usage.bytes) bytes after removeAll")
        }

        func expiry() async throws {
            let tier = try await makeTier(directory)
            _ = try await store(entry([1]), forKey: key("k"), in: tier)
            let outcome = try await store(entry([2], expiresAt: .distantPast), forKey: key("k"), in: tier)
            try expect(outcome == .refused(.alreadyExpired), "storing an expired entry gave \(outcome)")
            let found = try await tier.entry(forKey: key("k"))
            try expect(found == nil, "an expired store left \(String(describing: found)) behind")
            // An entry that expires after it is stored: served until then, a miss after.
            let now = clock?.now ?? Date()
            let fresh = entry([3], expiresAt: now.addingTimeInterval(60))
            let stored = try await store(fresh, forKey: key("expiring"), in: tier)
            try expect(stored == .stored, "storing an entry that expires in a minute gave \(stored)")
            let beforeExpiry = try await tier.entry(forKey: key("expiring"))
            try expect(
                beforeExpiry?.value == [3],
                "an entry a minute from its expiry read back \(String(describing: beforeExpiry))")
            guard let clock else { return }
            clock.advance(by: 120)
            let afterExpiry = try await tier.entry(forKey: key("expiring"))
            try expect(afterExpiry == nil, "an entry past its expiry was returned: \(String(describing: afterExpiry))")
        }

        func longKeys() async throws {
            let tier = try await makeTier(directory)
            let prefix = String(repeating: "p", count: CacheKey.maximumUTF8Length - 1)
            let first = try key(prefix + "1"), second = try key(prefix + "2")
            _ = try await store(entry([1]), forKey: first, in: tier)
            _ = try await store(entry([2]), forKey: second, in: tier)
            let one = try await tier.entry(forKey: first), two = try await tier.entry(forKey: second)
            try expect(
                one?.value == [1] && two?.value == [2],
                "long keys read back \(String(describing: one)), \(String(describing: two))")
            let shorter = try await tier.entry(forKey: key(prefix))
            try expect(shorter == nil, "a key that is a prefix of a stored key returned \(String(describing: shorter))")
        }

        func entrySizeRule() async throws {
            let tier = try await makeTier(directory)
            let usage = try await tier.usage()
            let limit = usage.maxEntryBytes
            try expectExercisable(limit, "entry limit")
            try expect(
                limit >= 0 && limit <= usage.capacity,
                "the tier reports an entry limit of \(limit) bytes for a capacity of \(usage.capacity)")
            var random = SplitMix64(seed: 5)
            _ = try await store(entry([9]), forKey: key("big"), in: tier)
            let outcome = try await store(entry(random.bytes(limit + 1)), forKey: key("big"), in: tier)
            guard case .refused(.tooLarge(let size, let reported)) = outcome else {
                throw Failure(
                    check: check,
                    message: "an entry of \(limit + 1) random bytes over a \(limit)-byte limit gave \(outcome)")
            }
            try expect(
                size > reported && reported == limit,
                "refusal reports size \(size), limit \(reported); expected limit \(limit)")
            let found = try await tier.entry(forKey: key("big"))
            try expect(found == nil, "a refused store left the older entry \(String(describing: found)) readable")
            // The rule is exact: what the tier adds to a value (key, framing) is what its refusal
            // reported beyond the value, so a value that much under the limit is stored at exactly
            // the limit, and one byte more is refused. (Random bytes: no compression moves it.)
            // Only where a second refusal, 100 bytes larger, shows the same addition: a tier
            // whose framing grows with the value (padding, rounding to blocks) is checked as above.
            let added = size - (limit + 1)
            let larger = try await store(entry(random.bytes(limit + 101)), forKey: key("big"), in: tier)
            guard case .refused(.tooLarge(let largerSize, _)) = larger else {
                throw Failure(
                    check: check,
                    message: "an entry of \(limit + 101) random bytes over a \(limit)-byte limit gave \(larger)")
            }
            let addsConstantly = largerSize - (limit + 101) == added
            if addsConstantly, added >= 0, added <= limit {
                let atLimit = try await store(entry(random.bytes(limit - added)), forKey: key("big"), in: tier)
                if case .refused(.tooLarge(let size, let reported)) = atLimit {
                    try expect(
                        size > reported,
                        "an entry of \(limit - added) bytes, stored at the \(limit)-byte limit, was refused as \(size) over \(reported)"
                    )
                } else {
                    try expect(
                        atLimit == .stored,
                        "an entry of \(limit - added) bytes, stored at the \(limit)-byte limit, gave \(atLimit)")
                }
                let overLimit = try await store(
                    entry(random.bytes(limit - added + 1)), forKey: key("big"), in: tier)
                guard case .refused(.tooLarge(let size, _)) = overLimit else {
                    throw Failure(
                        check: check,
                        message:
                            "an entry of \(limit - added + 1) bytes, one over the \(limit)-byte limit with the \(added) bytes the tier adds, gave \(overLimit)"
                    )
                }
                try expect(size > limit, "a refusal reported \(size) bytes, within the \(limit)-byte limit")
            }
            let fits = try await store(entry(random.bytes(limit / 2)), forKey: key("fits"), in: tier)
            try expect(fits == .stored, "an entry of half the limit gave \(fits)")
            let statistics = await tier.statistics()
            try expect(statistics.refusedTooLarge >= 1, "the refusal was not counted: \(statistics)")
        }

        func capacity() async throws {
            let tier = try await makeTier(directory)
            let start = try await tier.usage()
            try expectExercisable(start.capacity, "capacity")
            var random = SplitMix64(seed: 7)
            var written = 0, index = 0, stored = 0
            var lastKey = try key("none"), lastValue: [UInt8] = []
            while written < 4 * start.capacity {
                let value = random.bytes(Int(random.next() % UInt64(max(1, start.maxEntryBytes / 2))) + 1)
                let storeKey = try key("fill-\(index)")
                let outcome = try await store(entry(value), forKey: storeKey, in: tier)
                // An eviction policy's admission rule may keep an entry out (LIRS does, on its
                // first store, one larger than its spare room): said so, it is no failure.
                if case .refused(.notAdmitted) = outcome {
                } else {
                    try expect(
                        outcome == .stored,
                        "storing \(value.count) bytes (limit \(start.maxEntryBytes)) gave \(outcome)")
                    (lastKey, lastValue) = (storeKey, value)
                    stored += 1
                }
                let usage = try await tier.usage()
                try expect(
                    usage.bytes <= usage.capacity,
                    "usage \(usage.bytes) exceeds capacity \(usage.capacity) after \(index + 1) stores")
                written += value.count
                index += 1
            }
            try expect(stored * 2 >= index, "only \(stored) of \(index) stores were admitted")
            let last = try await tier.entry(forKey: lastKey)
            try expect(last?.value == lastValue, "the most recently stored entry was evicted")
            // What the tier still serves, not only what it reports: values of random bytes take
            // at least their own size, so those found must fit in the capacity.
            var servedBytes = 0
            for number in 0..<index {
                servedBytes += try await tier.entry(forKey: key("fill-\(number)"))?.value.count ?? 0
            }
            try expect(
                servedBytes <= start.capacity,
                "after writing 4x its capacity the tier still serves \(servedBytes) bytes of values, more than its capacity of \(start.capacity) (usage reports what it evicts, but the values stay)"
            )
            let statistics = await tier.statistics()
            try expect(statistics.evictions > 0, "writing 4x capacity evicted nothing: \(statistics)")
        }

        func concurrentUse() async throws {
            let tier = try await makeTier(directory)
            let empty = try await tier.usage()
            let makeKey: @Sendable (Int) throws -> CacheKey = { try CacheKey("shared-\($0)") }
            let value: @Sendable (Int, Int) -> [UInt8] = { key, writer in
                // The filler starts with 1, which no digit or ":" is, so the prefix is found; its
                // bytes are the writer's own, so that a value mixed from two writers' is no
                // writer's (with one filler per key, any mix of the same-length values was one).
                var random = SplitMix64(seed: UInt64(key * 8 + writer))
                return Array("\(key):\(writer)".utf8) + [1] + random.bytes(64 + key % 5)
            }
            // Each writer's own date: an entry read with another writer's is torn.
            let storedAt = self.storedAt
            let writerDate: @Sendable (Int) -> Date = { storedAt.addingTimeInterval(Double($0)) }
            try await withThrowingTaskGroup(of: String?.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var random = SplitMix64(seed: UInt64(worker))
                        for _ in 0..<300 {
                            let keyIndex = Int(random.next() % 32)
                            switch random.next() % 10 {
                            case 0: try await tier.removeEntry(forKey: makeKey(keyIndex))
                            case 1...4:
                                _ = try await tier.store(
                                    CacheEntry(value: value(keyIndex, worker), storedAt: writerDate(worker)),
                                    forKey: makeKey(keyIndex))
                            default:
                                guard let found = try await tier.entry(forKey: makeKey(keyIndex)) else { continue }
                                // "key:writer", then the key's filler: one writer's whole value.
                                let fields = String(
                                    decoding: found.value.prefix(while: { $0 != UInt8(ascii: "\u{1}") }),
                                    as: UTF8.self
                                ).split(separator: ":")
                                guard fields.count == 2, fields[0] == "\(keyIndex)" else {
                                    return "key \(keyIndex) returned another key's value"
                                }
                                guard let writer = Int(fields[1]), found.value == value(keyIndex, writer) else {
                                    return
                                        "key \(keyIndex) returned a value no writer stored: \(found.value.count) bytes"
                                }
                                guard found.metadata == CacheEntry.Metadata(storedAt: writerDate(writer)) else {
                                    return
                                        "key \(keyIndex) returned writer \(writer)'s value with another entry's metadata: \(found.metadata)"
                                }
                            }
                        }
                        return nil
                    }
                }
                group.addTask {
                    for _ in 0..<5 { try await tier.removeAll() }
                    return nil
                }
                for try await problem in group {
                    if let problem { throw Failure(check: check, message: problem) }
                }
            }
            let usage = try await tier.usage()
            try expect(usage.bytes <= usage.capacity && usage.entries <= 32, "usage after concurrent use: \(usage)")
            for keyIndex in 0..<32 { try await tier.removeEntry(forKey: makeKey(keyIndex)) }
            let emptied = try await tier.usage()
            try expect(
                emptied.entries == 0 && emptied.bytes == empty.bytes,
                "usage after removing every key used concurrently: \(emptied), \(empty.bytes) bytes when made (accounting drifted)"
            )
        }

        func persistence() async throws {
            var expected: [(CacheKey, CacheEntry?)] = []
            do {
                let tier = try await makeTier(directory)
                for index in 0..<50 {
                    let stored = entry(Array("persistent \(index)".utf8))
                    _ = try await store(stored, forKey: key("p\(index)"), in: tier)
                    expected.append((try key("p\(index)"), stored))
                }
                // Removals and replacements last too: a tier that deleted only from an index in
                // memory brought removed and replaced values back on reopening.
                for index in 0..<10 {
                    try await tier.removeEntry(forKey: key("p\(index)"))
                    expected[index].1 = nil
                }
                for index in 10..<20 {
                    let replaced = entry(Array("replaced \(index)".utf8))
                    _ = try await store(replaced, forKey: key("p\(index)"), in: tier)
                    expected[index].1 = replaced
                }
            }
            let reopened = try await makeTier(directory)
            for (key, stored) in expected {
                let found = try await reopened.entry(forKey: key)
                try expect(
                    found == stored,
                    "\(key) read back as \(String(describing: found)) after reopening; \(stored == nil ? "it was removed" : "expected \(String(describing: stored))")"
                )
            }
        }
    }
}

// A seeded generator, so a failing check fails the same way every run.
extension SplitMix64 {
    /// `count` bytes that do not compress.
    mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(count + 8)
        while result.count < count { withUnsafeBytes(of: next()) { result.append(contentsOf: $0) } }
        return Array(result.prefix(count))
    }
}
