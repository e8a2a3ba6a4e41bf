/// What went wrong talking to Redis.
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not be reached, or the connection broke.
    case connectionFailed(String)
    /// No reply within the command timeout; the connection was closed.
    case timeout
    /// The server sent something that is not RESP, or past the parser's limits.
    case protocolViolation(String)
    /// The server answered with an error reply.
    case server(String)
    /// The circuit breaker is open, or the node is backing off after failures: not tried.
    case unavailable(String)
    /// A bad URL or option.
    case invalidConfiguration(String)

    /// What failed, in words for a log.
    public var description: String {
        switch self {
        case .connectionFailed(let detail): "Redis connection failed: \(detail)"
        case .timeout: "Redis did not answer within the command timeout"
        case .protocolViolation(let detail): "Redis sent an invalid reply: \(detail)"
        case .server(let message): "Redis error: \(message)"
        case .unavailable(let detail): "Redis unavailable: \(detail)"
        case .invalidConfiguration(let detail): "invalid Redis configuration: \(detail)"
        }
    }
}
