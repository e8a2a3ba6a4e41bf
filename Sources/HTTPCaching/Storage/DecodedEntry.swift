import Synchronization
import TierCache

/// A stored response and the key it is stored under. A class, so the engine passes one
/// reference around a request instead of copying the response's fields.
final class Located: Sendable {
    let response: StoredResponse
    let key: CacheKey
    /// Whether it must be revalidated before any use the protocol decides (a tag's purge
    /// record could not be read: it may have been purged): not served under
    /// `stale-while-revalidate` or `max-stale`, though `stale-if-error` may still stand in.
    let revalidatesFirst: Bool

    init(response: StoredResponse, key: CacheKey, revalidatesFirst: Bool = false) {
        self.response = response
        self.key = key
        self.revalidatesFirst = revalidatesFirst
    }

    /// `response`, stored nowhere: for the public decision functions, which take a bare
    /// `StoredResponse` and never read the key.
    static func unstored(_ response: StoredResponse) -> Located {
        Located(response: response, key: unstoredKey)
    }

    private static let unstoredKey = CacheKey(digestOf: "unstored".utf8)
}

/// A decoded ``StoredEntry``, with responses already located under their key.
enum DecodedEntry: Sendable {
    case response(Located)
    case variants(VariantIndex)

    /// `entry`, stored under `key`.
    init(_ entry: StoredEntry, key: CacheKey) {
        switch entry {
        case .response(let response): self = .response(Located(response: response, key: key))
        case .variants(let index): self = .variants(index)
        }
    }
}

/// A decoded entry kept in the tier entry's ``CacheEntry/Memo``: a memory tier hands out copies
/// of the entry it holds, so later hits skip decoding. `key` is the key it was decoded under
/// (the one a revalidation writes back to); a memo found under another key is not used.
///
/// A decoded response roughly doubles what its entry occupies (the body is copied out of the
/// entry's bytes), and memory tiers count only the bytes, so the forms alive at once are bounded
/// by a ``DecodedFormBudget``: each holds its entry's size in it until it is freed with the
/// entry.
final class DecodedForm: Sendable {
    let key: CacheKey
    let entry: DecodedEntry
    private let cost: Int
    private let budget: DecodedFormBudget

    /// A form charged to `budget`, or `nil` when the budget has no room for `cost` bytes (the
    /// entry is then decoded again on each hit).
    init?(key: CacheKey, entry: DecodedEntry, cost: Int, budget: DecodedFormBudget) {
        guard budget.reserve(cost) else { return nil }
        self.key = key
        self.entry = entry
        self.cost = cost
        self.budget = budget
    }

    deinit { budget.release(cost) }
}

/// The bytes of decoded forms alive at once (see ``DecodedForm``), at most `limit`.
final class DecodedFormBudget: Sendable {
    let limit: Int
    private let used = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Bytes held now.
    var bytesInUse: Int { used.load(ordering: .relaxed) }

    func reserve(_ bytes: Int) -> Bool {
        guard bytes <= limit else { return false }
        let after = used.add(bytes, ordering: .relaxed).newValue
        guard after <= limit else {
            used.subtract(bytes, ordering: .relaxed)
            return false
        }
        return true
    }

    func release(_ bytes: Int) {
        used.subtract(bytes, ordering: .relaxed)
    }
}
