/// A reply from Redis, in RESP2 or RESP3 (https://redis.io/docs/latest/develop/reference/protocol-spec/).
public enum RESPValue: Sendable, Hashable {
    /// A simple string (`+OK`).
    case simpleString(String)
    /// An error reply (`-ERR …`, `-MOVED …`); ``RedisConnection`` hands these back as values so
    /// that the cluster layer can follow redirections.
    case error(String)
    /// An integer (`:1`).
    case integer(Int64)
    /// A binary-safe string (`$3 foo`): values and most replies.
    case bulkString([UInt8])
    /// An array of replies (`*2 …`); also RESP3's sets.
    case array([RESPValue])
    /// RESP2's null bulk string and null array, and RESP3's `_`.
    case null
    /// A RESP3 double (`,1.5`).
    case double(Double)
    /// A RESP3 boolean (`#t`, `#f`).
    case boolean(Bool)
    /// RESP3 maps, as key–value pairs in the server's order.
    case map([(RESPValue, RESPValue)])
    /// RESP3 big numbers, verbatim strings and pushes keep their text or elements.
    case bigNumber(String)
    /// A RESP3 push (`>…`): out-of-band messages such as invalidations.
    case push([RESPValue])

    /// The bytes of a bulk, simple or verbatim string.
    public var bytes: [UInt8]? {
        switch self {
        case .bulkString(let bytes): bytes
        case .simpleString(let text), .bigNumber(let text): Array(text.utf8)
        default: nil
        }
    }

    /// The text of a bulk or simple string.
    public var string: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// Values of the same kind with equal contents are equal; a NaN double equals a NaN double, so
    /// every value equals itself.
    public static func == (lhs: RESPValue, rhs: RESPValue) -> Bool {
        switch (lhs, rhs) {
        case (.simpleString(let a), .simpleString(let b)), (.error(let a), .error(let b)),
            (.bigNumber(let a), .bigNumber(let b)):
            a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.bulkString(let a), .bulkString(let b)): a == b
        case (.array(let a), .array(let b)), (.push(let a), .push(let b)): a == b
        case (.null, .null): true
        case (.double(let a), .double(let b)): a == b || (a.isNaN && b.isNaN)
        case (.boolean(let a), .boolean(let b)): a == b
        case (.map(let a), .map(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// Hashes the contents, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .simpleString(let text), .error(let text), .bigNumber(let text): hasher.combine(text)
        case .integer(let value): hasher.combine(value)
        case .bulkString(let bytes): hasher.combine(bytes)
        case .array(let values), .push(let values): hasher.combine(values)
        case .null: hasher.combine(0)
        case .double(let value): hasher.combine(value)
        case .boolean(let value): hasher.combine(value)
        case .map(let pairs): hasher.combine(pairs.count)
        }
    }
}
