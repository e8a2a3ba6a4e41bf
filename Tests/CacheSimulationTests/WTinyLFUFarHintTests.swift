import Testing

@testable import TierCacheEviction

/// W-TinyLFU in a large cache, driven as the simulator drives it (every request announced
/// `distance` requests ahead through `prefetch(_:keyHash:)`), turns on its far hints: the
/// window's log and the deeper prefetches of `prefetchNextContest()`. Hints must not change a
/// decision: the same requests without any announcement (as the memory tier drives the policy)
/// must hit and miss alike, through the window's moves and a copy of the policy mid-run.
@Suite struct WTinyLFUFarHintTests {
    private static let capacity: UInt64 = 1 << 17
    private static let distance = 8

    /// A frequency-skewed phase over 400,000 objects (half the requests for 20,000 of them), then
    /// a recency-heavy one (new objects, each requested again soon after), so that the window's
    /// climber has reason to move the window.
    private static func requests(seed: UInt64) -> [UInt32] {
        var state = seed
        func draw() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            let x = (state ^ (state >> 30)) &* 0xBF58_476D_1CE4_E5B9
            return x ^ (x >> 31)
        }
        let skewed = (0..<350_000).map { _ -> UInt32 in
            let value = draw()
            return UInt32(value % 2 == 0 ? value % 400_000 : value % 20_000)
        }
        let recent = (0..<300_000).map { position -> UInt32 in
            UInt32(400_000 + position / 3 + Int(draw() % 2_000))
        }
        return skewed + recent
    }

    private static func hash(_ object: UInt32) -> UInt64 { TraceKeyHash.of(object) }

    /// The requests' hits, announcing each one `distance` requests ahead if `prefetching`.
    private static func replay(
        _ requests: ArraySlice<UInt32>, on policy: inout WTinyLFUPolicy, prefetching: Bool
    ) -> [Bool] {
        requests.indices.map { position in
            if prefetching, position + distance < requests.endIndex {
                let upcoming = requests[position + distance]
                policy.prefetch(upcoming, keyHash: hash(upcoming))
            }
            let object = requests[position]
            return policy.access(object, size: 1, keyHash: hash(object), position: position)
        }
    }

    @Test("Far hints, the window's log among them, change no decision, in a copy either")
    func hintsChangeNoDecision() {
        let requests = Self.requests(seed: 11)
        let context = PolicyContext(capacity: Self.capacity, expectedSlots: 510_000, readsDepartures: false)
        let half = 350_000

        var plain = WTinyLFUPolicy(context: context)
        var hinted = WTinyLFUPolicy(context: context)
        let plainFirst = Self.replay(requests[..<half], on: &plain, prefetching: false)
        let hintedFirst = Self.replay(requests[..<half], on: &hinted, prefetching: true)
        #expect(hinted.givesFarHints)
        #expect(!plain.givesFarHints)

        // A copy made mid-run shares the log until one of them logs an arrival.
        var hintedCopy = hinted
        let windowBefore = hinted.windowMaximum
        let plainSecond = Self.replay(requests[half...], on: &plain, prefetching: false)
        let hintedSecond = Self.replay(requests[half...], on: &hinted, prefetching: true)
        #expect(hinted.windowMaximum != windowBefore, "the climber moved the window")
        let copySecond = Self.replay(Array(requests[half...].reversed())[...], on: &hintedCopy, prefetching: true)

        #expect(plainFirst.contains(true) && plainFirst.contains(false))
        #expect(PolicyCopyTests.firstDifference(hintedFirst, plainFirst) == nil)
        #expect(PolicyCopyTests.firstDifference(hintedSecond, plainSecond) == nil)
        var alone = WTinyLFUPolicy(context: context)
        _ = Self.replay(requests[..<half], on: &alone, prefetching: false)
        let aloneReversed = Self.replay(Array(requests[half...].reversed())[...], on: &alone, prefetching: false)
        #expect(PolicyCopyTests.firstDifference(copySecond, aloneReversed) == nil)
    }

    @Test("A small cache keeps no log, even for a driver that prefetches")
    func noLogWhereItDoesNotPay() {
        let requests = Self.requests(seed: 12)[..<200_000]
        var small = WTinyLFUPolicy(context: PolicyContext(capacity: 4_096, expectedSlots: 510_000))
        _ = Self.replay(requests, on: &small, prefetching: true)
        #expect(!small.givesFarHints)
    }
}
