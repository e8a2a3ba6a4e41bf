import Logging
import TierCache

extension Logger {
    /// Logs a disk tier's refused store: a warning when the disk is out of space (an operator
    /// should hear of it; what is stored stays readable), a debug line for the other reasons (the
    /// 5% rule, an expired entry), which are counted in the tier's statistics anyway. `loggedAs`
    /// names the key in the log instead of the key itself (a tier whose store hides its keys).
    public func logRefusal(_ outcome: StoreOutcome, key: CacheKey, loggedAs name: String? = nil, tier: String) {
        guard case .refused(let reason) = outcome else { return }
        let metadata: Logger.Metadata = ["tier": "\(tier)", "key": "\(name ?? key.rawValue)", "reason": "\(reason)"]
        if case .outOfSpace = reason {
            warning("disk tier out of space; entry not stored, stored entries stay readable", metadata: metadata)
        } else {
            debug("disk tier refused an entry", metadata: metadata)
        }
    }
}
