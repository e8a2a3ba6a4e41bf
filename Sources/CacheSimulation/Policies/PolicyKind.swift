/// The built-in policies, by the names the command line and reports use.
public enum PolicyKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Least recently used (`LRUPolicy`).
    case lru
    /// First in, first out: insertion order, hits change nothing (`FIFOPolicy`).
    case fifo
    /// CLOCK, second chance with one reference bit (`CLOCKPolicy`).
    case clock
    /// SIEVE (Zhang et al., NSDI'24): a FIFO queue and a hand that spares visited objects (`SIEVEPolicy`).
    case sieve
    /// S3-FIFO (Yang et al., SOSP'23): small, main and ghost FIFO queues (`S3FIFOPolicy`).
    case s3fifo = "s3-fifo"
    /// ARC (Megiddo & Modha, FAST'03): recency and frequency lists balanced by ghost hits (`ARCPolicy`).
    case arc
    /// W-TinyLFU (Einziger, Friedman & Manes, 2017): a window LRU before an admission filter
    /// over a segmented LRU, its window sized by miniature simulation (`WTinyLFUPolicy`).
    case wtinylfu = "w-tinylfu"
    /// Belady's MIN: evicts the object used furthest in the future; the offline optimum (``BeladyPolicy``).
    case belady
    /// LIRS (Jiang & Zhang, SIGMETRICS'02): inter-reference recency (`LIRSPolicy`).
    case lirs
    /// 2Q (Johnson & Shasha, VLDB'94), full version: A1in, A1out and Am (`TwoQPolicy`).
    case twoQ = "2q"

    /// The policy as the command line names it (`lru`, `s3-fifo`, `w-tinylfu`, …).
    public var description: String { rawValue }

    /// The name in reports (the policy type's `name`).
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
    public var policyType: any EvictionPolicy.Type { withType(TypeOf()) }

    /// Runs `operation` on the type that implements the policy, in code specialized for it (the
    /// one place a kind is mapped to its type).
    @inline(__always)
    func withType<Operation: PolicyTypeOperation>(_ operation: Operation) -> Operation.Result {
        switch self {
        case .lru: operation.run(LRUPolicy.self)
        case .fifo: operation.run(FIFOPolicy.self)
        case .clock: operation.run(CLOCKPolicy.self)
        case .sieve: operation.run(SIEVEPolicy.self)
        case .s3fifo: operation.run(S3FIFOPolicy.self)
        case .arc: operation.run(ARCPolicy.self)
        case .wtinylfu: operation.run(WTinyLFUPolicy.self)
        case .belady: operation.run(BeladyPolicy.self)
        case .lirs: operation.run(LIRSPolicy.self)
        case .twoQ: operation.run(TwoQPolicy.self)
        }
    }
}

/// Something done with a policy type, generic over it: ``PolicyKind/withType(_:)`` runs it on a
/// built-in's type (a generic function cannot be a closure).
protocol PolicyTypeOperation {
    associatedtype Result
    func run<Policy: EvictionPolicy>(_ type: Policy.Type) -> Result
}

/// The type itself, as an existential.
private struct TypeOf: PolicyTypeOperation {
    func run<Policy: EvictionPolicy>(_ type: Policy.Type) -> any EvictionPolicy.Type { type }
}
