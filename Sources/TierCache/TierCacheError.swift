/// The error every TierCache component throws.
///
/// Errors carry a ``Code`` that callers can match on, a human-readable message that says what
/// went wrong and what to do about it, and the underlying error when one exists. New codes may be
/// added in minor releases, so `switch` over codes with a `default` branch.
public struct TierCacheError: Error, Hashable, CustomStringConvertible, Sendable {
    /// What kind of failure this is. A struct rather than an enum so that codes can be added
    /// without breaking source compatibility.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidKey, invalidConfiguration, notADirectory, permissionDenied
            case diskFull, mapFull, damagedStore, foreignStore, incompatibleVersion, storageFailure
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The key is empty or longer than ``CacheKey/maximumUTF8Length``.
        public static let invalidKey = Code(.invalidKey)
        /// A configuration value is out of range (a zero or negative capacity, a fraction outside 0...1, ...).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// A path that must be a directory names a file.
        public static let notADirectory = Code(.notADirectory)
        /// The process may not read or write the tier's files.
        public static let permissionDenied = Code(.permissionDenied)
        /// The file system has no space left (or the quota or the process's file-size limit is
        /// reached); the entry was not stored.
        public static let diskFull = Code(.diskFull)
        /// A store's fixed-size map stayed full after evicting (readers held on to the pages
        /// eviction freed); the entry was not stored, or the removal not written.
        public static let mapFull = Code(.mapFull)
        /// The tier's files exist but are damaged; see the tier's recovery options.
        public static let damagedStore = Code(.damagedStore)
        /// The directory holds a database that TierCache did not create; it is left untouched.
        public static let foreignStore = Code(.foreignStore)
        /// The store was written by an incompatible version of TierCache.
        public static let incompatibleVersion = Code(.incompatibleVersion)
        /// Any other failure of the underlying storage engine; the message has its details.
        public static let storageFailure = Code(.storageFailure)

        /// The code's name, such as `diskFull`.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong, in words meant for a developer reading a log.
    public let message: String
    /// A description of the underlying failure (an errno or an engine's return code), if any.
    public let underlying: String?

    /// Creates an error; tiers of your own may throw these too.
    public init(_ code: Code, _ message: String, underlying: String? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The code, the message and the underlying failure, for logs.
    public var description: String {
        if let underlying { return "TierCacheError.\(code): \(message) (\(underlying))" }
        return "TierCacheError.\(code): \(message)"
    }
}
