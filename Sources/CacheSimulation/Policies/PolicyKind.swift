/// The built-in policies, by the names the command line and reports use.
public enum PolicyKind: String, Sendable, CaseIterable, CustomStringConvertible {
    case lru, fifo, clock, sieve
    case s3fifo = "s3-fifo"
    case arc
    case wtinylfu = "w-tinylfu"
    case belady
    case lirs
    case twoQ = "2q"

    /// The policy as the command line names it (`lru`, `s3-fifo`, `w-tinylfu`, …).
    public var description: String { rawValue }

    /// The name in reports (``EvictionPolicy/name``).
    public var displayName: String { policyType.name }

    /// Accepts the raw names and a few spellings people type (`s3fifo`, `wtinylfu`, `tinylfu`, `min`, `opt`).
    public init?(name: String) {
        let folded = String(name.lowercased().map { $0 == "_" ? "-" : $0 })
        switch folded {
        case "s3fifo": self = .s3fifo
        case "wtinylfu", "tinylfu", "w-tiny-lfu": self = .wtinylfu
        case "min", "opt", "optimal": self = .belady
        case "twoq", "two-q", "2-q": self = .twoQ
        default:
            guard let kind = PolicyKind(rawValue: folded) else { return nil }
            self = kind
        }
    }

    /// The type that implements the policy.
    public var policyType: any EvictionPolicy.Type {
        switch self {
        case .lru: LRUPolicy.self
        case .fifo: FIFOPolicy.self
        case .clock: CLOCKPolicy.self
        case .sieve: SIEVEPolicy.self
        case .s3fifo: S3FIFOPolicy.self
        case .arc: ARCPolicy.self
        case .wtinylfu: WTinyLFUPolicy.self
        case .belady: BeladyPolicy.self
        case .lirs: LIRSPolicy.self
        case .twoQ: TwoQPolicy.self
        }
    }
}
