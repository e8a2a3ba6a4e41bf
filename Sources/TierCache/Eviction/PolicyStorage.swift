import TierCacheEviction

extension MemoryTier {
    /// The tier's store under its policy, behind its lock: a case per built-in policy, and one
    /// for a policy type of the app's own.
    ///
    /// Not copyable, so that each built-in policy's lock and store lie inside the tier's object:
    /// a switch borrows its case, where an enum of class references retained and released the
    /// store on every lookup and store (two of the locked instructions that kept a set behind the
    /// minimal LRU's).
    enum Storage: ~Copyable, Sendable {
        case lru(Locked<PolicyStore<LRUPolicy>>)
        case fifo(Locked<PolicyStore<FIFOPolicy>>)
        case clock(Locked<PolicyStore<CLOCKPolicy>>)
        case sieve(Locked<PolicyStore<SIEVEPolicy>>)
        case s3fifo(Locked<PolicyStore<S3FIFOPolicy>>)
        case arc(Locked<PolicyStore<ARCPolicy>>)
        case twoQ(Locked<PolicyStore<TwoQPolicy>>)
        case lirs(Locked<PolicyStore<LIRSPolicy>>)
        case wTinyLFU(Locked<PolicyStore<WTinyLFUPolicy>>)
        case custom(any CustomStoring)

        init(
            _ policy: EvictionPolicy, capacity: Int, minimumWeight: Int,
            keyHash: @escaping @Sendable (CacheKey) -> UInt64
        ) {
            func make<P: TierCacheEviction.EvictionPolicy>(_: P.Type) -> Locked<PolicyStore<P>> {
                Locked(PolicyStore<P>(capacity: capacity, minimumWeight: minimumWeight, keyHash: keyHash))
            }
            switch policy {
            case .lru: self = .lru(make(LRUPolicy.self))
            case .fifo: self = .fifo(make(FIFOPolicy.self))
            case .clock: self = .clock(make(CLOCKPolicy.self))
            case .sieve: self = .sieve(make(SIEVEPolicy.self))
            case .s3fifo: self = .s3fifo(make(S3FIFOPolicy.self))
            case .arc: self = .arc(make(ARCPolicy.self))
            case .twoQ: self = .twoQ(make(TwoQPolicy.self))
            case .lirs: self = .lirs(make(LIRSPolicy.self))
            case .wTinyLFU: self = .wTinyLFU(make(WTinyLFUPolicy.self))
            }
        }

        /// The report name of a built-in policy (its type's ``TierCacheEviction/EvictionPolicy/name``).
        static func policyName(_ policy: EvictionPolicy) -> String {
            switch policy {
            case .lru: LRUPolicy.name
            case .fifo: FIFOPolicy.name
            case .clock: CLOCKPolicy.name
            case .sieve: SIEVEPolicy.name
            case .s3fifo: S3FIFOPolicy.name
            case .arc: ARCPolicy.name
            case .twoQ: TwoQPolicy.name
            case .lirs: LIRSPolicy.name
            case .wTinyLFU: WTinyLFUPolicy.name
            }
        }

        /// Runs `operation` on the store: one switch, each case code specialized for its policy.
        func apply<Operation: StoreOperation>(_ operation: Operation) -> Operation.Result {
            switch self {
            case .lru(let store): operation.run(on: store)
            case .fifo(let store): operation.run(on: store)
            case .clock(let store): operation.run(on: store)
            case .sieve(let store): operation.run(on: store)
            case .s3fifo(let store): operation.run(on: store)
            case .arc(let store): operation.run(on: store)
            case .twoQ(let store): operation.run(on: store)
            case .lirs(let store): operation.run(on: store)
            case .wTinyLFU(let store): operation.run(on: store)
            case .custom(let store): store.apply(operation)
            }
        }

        func remove(_ key: CacheKey) { apply(Remove(key: key)) }
        func removeAll() { apply(RemoveAll()) }
        var usage: (bytes: Int, entries: Int) { apply(Usage()) }
        var keysByRetention: [CacheKey] { apply(KeysByRetention()) }
        var requests: RequestCounts { apply(Requests()) }
        var largestAdmissibleCost: Int { apply(LargestAdmissibleCost()) }
    }
}

/// What the tier does with its store, whatever the policy: ``MemoryTier/Storage/apply(_:)`` runs
/// it on the policy's store (a generic function cannot be a closure).
protocol StoreOperation {
    associatedtype Result
    func run<Store: EvictingStore>(on store: borrowing Locked<Store>) -> Result
}

/// The store of a policy type of the app's own: a class, so that the enum can hold one whose
/// type it does not know.
final class CustomStore<Store: EvictingStore>: CustomStoring {
    let state: Locked<Store>
    init(_ store: sending Store) { state = Locked(store) }

    func apply<Operation: StoreOperation>(_ operation: Operation) -> Operation.Result {
        operation.run(on: state)
    }
}

/// A ``CustomStore`` of a policy type the tier does not know.
protocol CustomStoring: AnyObject, Sendable {
    func apply<Operation: StoreOperation>(_ operation: Operation) -> Operation.Result
}

// The cold paths: removal, usage, inspection.

private struct Remove: StoreOperation {
    let key: CacheKey
    func run<Store: EvictingStore>(on store: borrowing Locked<Store>) { store.withLock { $0.remove(key) } }
}

private struct RemoveAll: StoreOperation {
    func run<Store: EvictingStore>(on store: borrowing Locked<Store>) { store.withLock { $0.removeAll() } }
}

private struct Usage: StoreOperation {
    func run<Store: EvictingStore>(on store: borrowing Locked<Store>) -> (bytes: Int, entries: Int) {
        store.withLock { ($0.totalCost, $0.count) }
    }
}

private struct KeysByRetention: StoreOperation {
    func run<Store: EvictingStore>(on store: borrowing Locked<Store>) -> [CacheKey] {
        store.withLock { $0.keysByRetention }
    }
}

private struct LargestAdmissibleCost: StoreOperation {
    func run<Store: EvictingStore>(on store: borrowing Locked<Store>) -> Int {
        store.withLock { $0.largestAdmissibleCost }
    }
}

private struct Requests: StoreOperation {
    func run<Store: EvictingStore>(on store: borrowing Locked<Store>) -> RequestCounts {
        store.withLock { $0.requests }
    }
}
