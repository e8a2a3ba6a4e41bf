/// Errors ``HTTPCache`` throws itself (a transport's errors pass through unchanged).
public struct HTTPCacheError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// ``RequestCachePolicy/returnCacheDataDontLoad`` and nothing stored for the request.
        public static let notCached = Code("notCached")
        /// The request cannot be cached or sent (no scheme or authority).
        public static let invalidRequest = Code("invalidRequest")
        /// A server-side entry point (a middleware, a proxy) was given an engine in
        /// ``HTTPCache/Mode/private`` mode, which would store one user's responses and serve them
        /// to every user.
        public static let privateCacheOnServer = Code("privateCacheOnServer")
        /// The transport's response has more header fields than
        /// ``HTTPCache/maximumResponseFieldCount``: it is neither stored nor returned.
        public static let invalidResponse = Code("invalidResponse")
        /// A purge could not be recorded: the storage's lowest tier failed or refused a tag's
        /// record, or a tier failed to remove (or mark) a purged URL's responses.
        public static let purgeFailed = Code("purgeFailed")
        /// The code's name.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong, in words for a log.
    public let message: String

    /// An error of `code` with a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code and the message.
    public var description: String { "HTTPCacheError.\(code): \(message)" }
}
