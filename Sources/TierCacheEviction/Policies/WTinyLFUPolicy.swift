/// W-TinyLFU (Einziger, Friedman & Manes, 2017), following Caffeine's `BoundedLocalCache` for a
/// weighted cache. The frequency sketch counts the key hash each request carries.
///
/// New objects enter an LRU window (1% of the capacity at first). Objects leaving the window
/// become candidates at the young end of the main cache's probation segment; while the cache is
/// over capacity, the oldest probation object (the victim) and the candidate meet, and the one the
/// sketch counts less often leaves (the candidate on a tie; a warm candidate still wins 1 in 128).
/// A probation hit promotes to the protected segment (80% of the main cache), whose overflow
/// returns to probation. The sketch is sized, and starts counting, once the cache is half full.
///
/// One deviation from Caffeine: the window is sized by miniature simulation
/// (`MiniatureWindowClimber`, started when the sketch is), not by Caffeine's hill climber, which
/// moves too slowly to keep W-TinyLFU level with LRU on recency-heavy traces. When the climber
/// names a new window share, the window takes it at once, the main cache's protected segment
/// stays 80% of what is left, and up to 1,000 objects move across (Caffeine's transfer limit).
public struct WTinyLFUPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "W-TinyLFU"
    /// The sketch counts keys by the hash each request carries.
    public static let usesKeyHash = true
    private static let window: UInt8 = 1
    private static let probation: UInt8 = 2
    private static let protected: UInt8 = 3
    // Caffeine's constants.
    private static let percentMain = 0.99
    private static let percentMainProtected = 0.80
    private static let queueTransferThreshold = 1_000
    private static let admitHashDoSThreshold = 5

    // Reachable from the inlinable `prefetch(_:keyHash:)`, and otherwise this file's alone.
    @usableFromInline var queues: SlotQueues
    @usableFromInline var sketch = TinyLFUSketch()
    private let capacity: Int
    /// The window's share of the capacity now, in the capacity's unit.
    public private(set) var windowMaximum: Int
    private var protectedMaximum: Int
    private var random = AdmissionRandom()
    private var climber = MiniatureWindowClimber()
    /// The window's coming candidates, for a driver that prefetches, in a large cache
    /// (`prefetchNextContest()`).
    private var windowLog = WindowLog()
    /// Whether the driver calls ``prefetch(_:keyHash:)`` (the simulator does, the memory tier
    /// does not).
    @usableFromInline var driverPrefetches = false
    /// Whether the far hints of `prefetchNextContest()` are on (for tests).
    var givesFarHints: Bool { windowLog.isActive }
    /// Whether the window's miniatures are watching, not resting (for tests).
    var climberIsWatching: Bool { climber.isWatching }

    /// An empty cache of `context`'s capacity.
    public init(context: PolicyContext) {
        queues = SlotQueues(
            queueCount: 3, reserving: context.expectedSlots, notingDepartures: context.readsDepartures)
        capacity = Int(clamping: context.capacity)
        windowMaximum = capacity - Int(Self.percentMain * Double(capacity))
        protectedMaximum = Int(Self.percentMainProtected * Double(capacity - windowMaximum))
    }

    // Weights and costs without a trap on conversion: every cost admitted is at most the
    // capacity (at most `PolicyContext.maximumCapacity`, 2^60), and the queues together hold at
    // most the capacity plus one cost, so neither a weight nor a sum of them exceeds `Int.max`
    // (checked conversions and sums were a tenth of a miss's instructions).
    @inline(__always) private func weight(_ queue: UInt8) -> Int { Int(truncatingIfNeeded: queues.weight(queue)) }
    @inline(__always) private func cost(of object: UInt32) -> Int { Int(truncatingIfNeeded: queues.size(of: object)) }
    /// The sketch's view of the object's key hash, kept in its node: admission reads a victim's
    /// in the cache line its links are in, not in an array of its own (a miss per eviction on a
    /// trace of millions of objects).
    @inline(__always) private func foldedHash(of object: UInt32) -> UInt32 { queues.word(of: object) }
    // Inlined: an outlined getter took the whole policy by value, a copy per call.
    private var totalCost: Int {
        @inline(__always) get { weight(Self.window) &+ weight(Self.probation) &+ weight(Self.protected) }
    }
    private var count: Int {
        @inline(__always) get {
            queues.count(Self.window) &+ queues.count(Self.probation) &+ queues.count(Self.protected)
        }
    }

    /// Makes the queues, the sketch and the window's log this policy's own, copying them if a
    /// copy of the policy shares them; every mutating entry point starts here, so that a request
    /// then changes all three without checking again.
    ///
    /// One check stands for three: the three are copied together, with the policy, and this
    /// copies all three whenever the queues were shared, so the sketch and the log are shared
    /// only while the queues are. (Each count of the sketch and each arrival in the log checked
    /// for itself before: calls into the runtime, about 20 instructions a request on P12.)
    @inline(__always)
    private mutating func makeStorageUnique() {
        if queues.makeUnique() {
            sketch.makeUnique()
            windowLog.makeUnique()
        }
    }

    /// Serves a request; returns whether it hit.
    public mutating func access(_ object: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        queues.beginRequest()
        makeStorageUnique()
        if queues.queue(of: object) != SlotQueues.none {
            onAccess(object)
            demoteFromProtected()
            adapt(keyHash, cost: cost(of: object))
            return true
        }
        // An object larger than the cache is never admitted (the tier refuses it before its policy).
        guard size <= UInt64(capacity) else { return false }
        queues.setSizeKnowingUnique(size, word: TinyLFUSketch.fold(keyHash), of: object)
        add(object)
        if !admitWindowsOldest(sparing: object) {
            evictFromMain(candidates: evictFromWindow(), sparing: object)
        }
        demoteFromProtected()
        adapt(keyHash, cost: Int(truncatingIfNeeded: size))
        prefetchNextContest()
        return false
    }

    /// The contests of the next misses start loading now: the window's next candidates, and
    /// probation's oldest (the victim while candidates lose). Their sketch counters and nodes are
    /// cold by then (the window turns over between an object's arrival and its turn), and the
    /// estimates waited on them, a miss to memory per admission.
    ///
    /// The walk from the window's oldest reaches two candidates ahead, and the object after the
    /// victim. A sketch that fits a core's cache (256 KiB at 32,768 objects) was still found
    /// waiting on the candidate's counters, so these hints are given at every size. In a large
    /// cache the walk falls behind (each step is a miss to memory, and every miss needs one), so
    /// there the window's log (``WindowLog``) names the candidate ``candidatesAhead`` misses
    /// ahead instead, and the hints reach the victim after next (the one a winning candidate
    /// leaves), and the object that will next leave protected (`demoteFromProtected()`).
    @inline(__always)
    private mutating func prefetchNextContest() {
        if windowLog.isActive { return prefetchFarContests() }
        guard let oldest = queues.tail(Self.window) else { return }
        sketch.prefetch(folded: foldedHash(of: oldest))
        guard let next = queues.newer(than: oldest) else { return }
        sketch.prefetch(folded: foldedHash(of: next))
        if let after = queues.newer(than: next) { queues.prefetch(after) }
        prefetchVictims(countingTheNext: false)
    }

    /// The far hints of `prefetchNextContest()`, from the window's log: a call of its own (one a
    /// miss), so that a cache without the log runs the near hints' code as it was.
    @inline(never)
    private mutating func prefetchFarContests() {
        guard let oldest = queues.tail(Self.window) else { return }
        // An object heavier than the window arrived at its old end, unlogged (`add`).
        if cost(of: oldest) <= windowMaximum {
            if windowLog.seek(oldest) {
                if let coming = windowLog.entry(after: Self.candidatesAhead) {
                    sketch.prefetch(folded: coming.folded)
                    queues.prefetch(coming.object)
                }
            } else {
                rebuildWindowLog()
            }
        }
        prefetchVictims(countingTheNext: true)
    }

    /// The victims' part of `prefetchNextContest()`: probation's oldest (the victim while
    /// candidates lose) and its counters, and the node of the object after it; with
    /// `countingTheNext`, that object's counters too (it is the victim once a candidate wins),
    /// and the node after it.
    @inline(__always)
    private func prefetchVictims(countingTheNext: Bool) {
        guard let victim = queues.tail(Self.probation) else { return }
        sketch.prefetch(folded: foldedHash(of: victim))
        guard let next = queues.newer(than: victim) else { return }
        guard countingTheNext else { return queues.prefetch(next) }
        sketch.prefetch(folded: foldedHash(of: next))
        if let after = queues.newer(than: next) { queues.prefetch(after) }
    }

    /// How many misses ahead the window's log names the candidate to load: at 3 (about 300 ns on
    /// P12 at 524,288 objects) the candidate's counters were still on their way (12% of the
    /// policy's samples waited on them, 7% at 8); 16 was no better than 8.
    private static let candidatesAhead = 8

    /// The entries a full cache holds from which a driver that prefetches gets the far hints of
    /// `prefetchNextContest()`: a sketch of 1 MiB, more than a core's cache on most machines.
    /// Below that the walk keeps up, and the log's upkeep cost more than it saved (W-TinyLFU
    /// replayed P12 at 32,768 objects about a tenth slower with it, in pairs with LRU).
    private static let farHintEntries = 1 << 17

    /// Starts the window's log, or restarts it when it has lost track of the window: from the
    /// window's links, oldest first.
    private mutating func rebuildWindowLog() {
        windowLog.rebuild(oldestFirst: queues.members(of: Self.window).reversed().map { ($0, foldedHash(of: $0)) })
    }

    /// Starts loading the slot's node and its key's sketch counters, the two cache misses of
    /// every request on a large trace. (Given only once the sketch had outgrown a core's cache,
    /// the node's hint too, P12 at 32,768 objects waited on the requested node for a fifth of
    /// the request's samples: the nodes are the trace's, not the cache's, and far larger.)
    /// Inlinable: a call into this module from the simulator's loop cost as much as the two hints.
    @inlinable
    public mutating func prefetch(_ slot: UInt32, keyHash: UInt64) {
        driverPrefetches = true
        queues.prefetch(slot)
        sketch.prefetch(folded: TinyLFUSketch.fold(keyHash))
    }

    /// Forgets `slot`.
    public mutating func remove(_ slot: UInt32) {
        queues.beginRequest()
        guard isResident(slot) else { return }
        makeStorageUnique()
        queues.removeKnowingUnique(slot)
    }

    /// Forgets every slot, the sketch's counts and the window's history too.
    public mutating func removeAll() {
        queues.removeAll()
        sketch = TinyLFUSketch()
        random = AdmissionRandom()
        climber = MiniatureWindowClimber()
        windowLog = WindowLog()
        windowMaximum = capacity - Int(Self.percentMain * Double(capacity))
        protectedMaximum = Int(Self.percentMainProtected * Double(capacity - windowMaximum))
    }

    /// Whether `slot` is in the window or the main cache.
    public func isResident(_ slot: UInt32) -> Bool { queues.queue(of: slot) != SlotQueues.none }
    /// W-TinyLFU's history is in its sketch, by key hash: a slot is remembered only while resident.
    public func remembers(_ slot: UInt32) -> Bool { isResident(slot) }
    /// The slots the last call took out of a queue.
    public var departures: ArraySlice<UInt32> { queues.departures }
    /// The whole capacity.
    public var largestAdmissibleSize: UInt64 { UInt64(capacity) }
    /// Protected, then probation, then the window, each from its most recent end.
    public var residentsByRetention: [UInt32] {
        queues.members(of: Self.protected) + queues.members(of: Self.probation) + queues.members(of: Self.window)
    }

    /// Caffeine's `onAccess`: count the key, then move the object up its segment.
    #if compiler(>=6.3)
    @inline(always)
    #else
    @inline(__always)
    #endif
    private mutating func onAccess(_ object: UInt32) {
        sketch.incrementKnowingUnique(folded: foldedHash(of: object))
        switch queues.queue(of: object) {
        case Self.window:
            queues.moveToHeadKnowingUnique(object, Self.window)
            windowLog.append(object, folded: foldedHash(of: object))
        case Self.probation:
            // An object heavier than the protected segment stays in probation (`reorderProbation`).
            let segment = cost(of: object) > protectedMaximum ? Self.probation : Self.protected
            queues.moveToHeadKnowingUnique(object, segment)
        default: queues.moveToHeadKnowingUnique(object, Self.protected)
        }
    }

    // `add`, `admitWindowsOldest` and `admit` are inlined into the miss: `@inline(always)` (Swift
    // 6.3, SE-0496) inlines for certain, where `@inline(__always)`, all that Swift 6.2 has, left
    // functions this large as calls, with their register saves (65 instructions a request on P12).
    /// Caffeine's `AddTask`: the object joins the window, the sketch is sized once the cache is
    /// half full, and the key is counted.
    #if compiler(>=6.3)
    @inline(always)
    #else
    @inline(__always)
    #endif
    private mutating func add(_ object: UInt32) {
        let size = cost(of: object)
        if totalCost &+ size >= capacity / 2 {
            sketch.ensureCapacity(count &+ 1)
            if !climber.isStarted {
                // The entries a full cache will hold, from the half that holds count + 1 now.
                let entries = Int(Double(count + 1) * Double(capacity) / Double(max(1, totalCost + size)))
                climber.start(capacity: capacity, entries: entries, initialShare: 1 - Self.percentMain)
                if driverPrefetches, entries >= Self.farHintEntries { rebuildWindowLog() }
            }
        }
        sketch.incrementKnowingUnique(folded: foldedHash(of: object))
        // An object heavier than the whole window is the first to leave it.
        if size > windowMaximum {
            queues.pushTailKnowingUnique(object, Self.window)
        } else {
            queues.pushHeadKnowingUnique(object, Self.window)
            windowLog.append(object, folded: foldedHash(of: object))
        }
    }

    /// Moves the window's oldest objects to the young end of probation while the window is over
    /// its maximum; returns how many moved (the candidates). The storage is unique
    /// (`makeStorageUnique()`).
    private mutating func evictFromWindow() -> Int {
        var candidates = 0
        var node = queues.tail(Self.window)
        while weight(Self.window) > windowMaximum {
            guard let current = node else { break }
            node = queues.newer(than: current)
            if cost(of: current) != 0 {
                queues.moveToHeadKnowingUnique(current, Self.probation)
                candidates += 1
            }
        }
        return candidates
    }

    /// The usual miss of a full cache, in one step: the new object pushed out the window's oldest
    /// (the only candidate), and either the candidate or probation's oldest (the victim) leaving
    /// makes room. `evictFromWindow()` then `evictFromMain(candidates:sparing:)` make the same
    /// decisions, but move a candidate into probation before it meets the victim, and a rejected
    /// candidate, most of them on a large trace, then leaves probation again: here it leaves the
    /// window. Returns false, having changed nothing, when the miss is not that case.
    #if compiler(>=6.3)
    @inline(always)
    #else
    @inline(__always)
    #endif
    private mutating func admitWindowsOldest(sparing spared: UInt32) -> Bool {
        // The storage is unique (`makeStorageUnique()`).
        guard let candidate = queues.tail(Self.window), candidate != spared,
            case let candidateCost = cost(of: candidate), candidateCost != 0,
            weight(Self.window) > windowMaximum, weight(Self.window) - candidateCost <= windowMaximum
        else { return false }
        let excess = totalCost &- capacity
        if excess <= 0 {
            queues.moveToHeadKnowingUnique(candidate, Self.probation)
            return true
        }
        guard let victim = queues.tail(Self.probation) else {
            // An empty probation (a window of the whole cache: the miniatures chose LRU) has the
            // candidate meet itself and leave, as it does in `evictFromMain(candidates:sparing:)`
            // after moving in, without the move and the walk (55 instructions a miss on P12 at
            // 3,153 objects, where the window takes the whole cache).
            guard excess <= candidateCost else { return false }
            queues.removeKnowingUnique(candidate)
            return true
        }
        // The object being added is in the window, so it is not the victim.
        guard candidateCost <= capacity,
            excess <= min(candidateCost, cost(of: victim))
        else { return false }
        if admit(candidate: candidate, victim: victim) {
            queues.moveToHeadKnowingUnique(candidate, Self.probation)
            queues.removeKnowingUnique(victim)
        } else {
            queues.removeKnowingUnique(candidate)
        }
        return true
    }

    /// Caffeine's `evictFromMain`: while over capacity, the candidates (probation's young end,
    /// then the window) meet the victims (probation's old end, then protected's, then the
    /// window's); the one with the lower frequency leaves. As in the tier (whose contract is that
    /// a store is readable right after it), the object being added is never evicted: as a
    /// candidate it always wins, as a victim it is passed over. This is the `evictFromMain(int
    /// candidates)` of Caffeine 2.x: once the candidates run out, the window's newest object is
    /// the next candidate. Caffeine 3's `evictFromMain(Node candidate)` takes the window's oldest
    /// instead; the two differ only on that rare path (a miss whose one candidate did not make
    /// room), and the figures in `docs/eviction-policies.md` come from this one. The storage is
    /// unique (`makeStorageUnique()`).
    private mutating func evictFromMain(candidates startingCandidates: Int, sparing spared: UInt32?) {
        var candidates = startingCandidates
        var victimQueue = Self.probation
        var victim = queues.tail(Self.probation)
        var candidate = queues.head(Self.probation)
        while totalCost > capacity {
            if candidates == 0 { candidate = queues.head(Self.window) }
            guard let currentCandidate = candidate else {
                guard let currentVictim = victim else {
                    if victimQueue == Self.probation {
                        victim = queues.tail(Self.protected)
                        victimQueue = Self.protected
                        continue
                    } else if victimQueue == Self.protected {
                        victim = queues.tail(Self.window)
                        victimQueue = Self.window
                        continue
                    }
                    break
                }
                victim = queues.newer(than: currentVictim)
                if currentVictim == spared { continue }
                queues.removeKnowingUnique(currentVictim)
                continue
            }
            guard let currentVictim = victim else {
                candidate = queues.older(than: currentCandidate)
                candidates -= 1
                if currentCandidate == spared { continue }
                queues.removeKnowingUnique(currentCandidate)
                continue
            }
            if currentVictim == currentCandidate {
                victim = queues.newer(than: currentVictim)
                candidates -= 1
                candidate = nil
                if currentCandidate == spared { continue }
                queues.removeKnowingUnique(currentCandidate)
                continue
            }
            if currentVictim == spared {
                victim = queues.newer(than: currentVictim)
                continue
            }
            if cost(of: currentCandidate) > capacity {
                candidate = candidates > 0 ? queues.older(than: currentCandidate) : queues.newer(than: currentCandidate)
                candidates -= 1
                queues.removeKnowingUnique(currentCandidate)
                continue
            }
            candidates -= 1
            if currentCandidate == spared || admit(candidate: currentCandidate, victim: currentVictim) {
                victim = queues.newer(than: currentVictim)
                queues.removeKnowingUnique(currentVictim)
                candidate = queues.older(than: currentCandidate)
            } else {
                candidate = candidates > 0 ? queues.older(than: currentCandidate) : queues.newer(than: currentCandidate)
                queues.removeKnowingUnique(currentCandidate)
            }
        }
    }

    #if compiler(>=6.3)
    @inline(always)
    #else
    @inline(__always)
    #endif
    private mutating func admit(candidate: UInt32, victim: UInt32) -> Bool {
        let victimFrequency = sketch.rememberedFrequency(folded: foldedHash(of: victim))
        let candidateFrequency = sketch.frequency(folded: foldedHash(of: candidate))
        if candidateFrequency > victimFrequency { return true }
        if candidateFrequency <= Self.admitHashDoSThreshold { return false }
        return random.next() & 127 == 0
    }

    /// Moves the window to the share the miniatures rank best, when they name a new one. Inlined:
    /// on all but the sampled requests it is a countdown and the sample test alone.
    @inline(__always)
    private mutating func adapt(_ hash: UInt64, cost: Int) {
        guard let share = climber.record(hash, cost: cost) else { return }
        resizeWindow(to: Int(share * Double(capacity)))
    }

    /// Sets the window's maximum (the main cache keeps its 80% protected share) and moves up to
    /// `queueTransferThreshold` entries across, as Caffeine's `increaseWindow` and
    /// `decreaseWindow` do; the rest follows as entries arrive and leave. The storage is unique
    /// (`makeStorageUnique()`).
    private mutating func resizeWindow(to target: Int) {
        let target = min(capacity, max(1, target))
        if target > windowMaximum {
            var room = target - windowMaximum
            windowMaximum = target
            protectedMaximum = Int(Self.percentMainProtected * Double(capacity - windowMaximum))
            demoteFromProtected()
            for _ in 0..<Self.queueTransferThreshold {
                var moving = queues.tail(Self.probation)
                if let probationTail = moving, room >= cost(of: probationTail) {
                    // The oldest probation object fits in the room: it moves.
                } else {
                    moving = queues.tail(Self.protected)
                }
                guard let object = moving, room >= cost(of: object) else { break }
                room -= cost(of: object)
                queues.moveToHeadKnowingUnique(object, Self.window)
                windowLog.append(object, folded: foldedHash(of: object))
            }
        } else if target < windowMaximum {
            windowMaximum = target
            protectedMaximum = Int(Self.percentMainProtected * Double(capacity - windowMaximum))
            for _ in 0..<Self.queueTransferThreshold {
                guard weight(Self.window) > windowMaximum, let object = queues.tail(Self.window) else { break }
                queues.moveToHeadKnowingUnique(object, Self.probation)
            }
        }
    }

    /// Returns protected's overflow to probation (up to `queueTransferThreshold` entries); runs
    /// after every request, so the usual case (no overflow) returns at once. The storage is
    /// unique (`makeStorageUnique()`).
    @inline(__always)
    private mutating func demoteFromProtected() {
        guard weight(Self.protected) > protectedMaximum else { return }
        for _ in 0..<Self.queueTransferThreshold {
            guard weight(Self.protected) > protectedMaximum,
                let demoted = queues.tail(Self.protected)
            else { break }
            queues.moveToHeadKnowingUnique(demoted, Self.probation)
        }
        // The next demotion's node is loaded now (`prefetchNextContest()`).
        if windowLog.isActive, let tail = queues.tail(Self.protected), let next = queues.newer(than: tail) {
            queues.prefetch(next)
        }
    }
}

/// SplitMix64 from a fixed seed: the admission's 1-in-128 draw, the same in every run.
struct AdmissionRandom {
    private var state: UInt64 = 0x5EED_CAFE_F00D_D00D

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var x = state
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }
}
