import Foundation

/// Where a Redis server listens, and how to log in.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The server's host name or address.
    public var host: String
    /// The server's port (6379 by default).
    public var port: Int
    /// The ACL user (Redis 6+); nil for the default user. A user without a ``password`` logs in
    /// with an empty one, which a user with `nopass` accepts and any other refuses.
    public var username: String?
    /// The password for `AUTH`; nil when the server or the user has none.
    public var password: String?
    /// The database for `SELECT` (standalone only; a cluster has only database 0).
    public var database: Int
    /// Whether connections use TLS (written `rediss://`); see ``RedisTLS``.
    public var usesTLS: Bool

    /// An endpoint; without a user, password or database, the server's defaults.
    public init(
        host: String, port: Int = 6379, username: String? = nil, password: String? = nil, database: Int = 0,
        usesTLS: Bool = false
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.usesTLS = usesTLS
    }

    /// Parses `redis://[[user][:password]@]host[:port][/database]`, or `rediss://…` for TLS
    /// (see ``RedisTLS``).
    ///
    /// Errors quote the URL without its user and password (a password holding `#`, `/` or `@`
    /// unescaped makes the URL unreadable, and the message would otherwise carry it into logs).
    public init(url text: String) throws(RedisError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw .invalidConfiguration(
                "\"\(Self.withoutCredentials(text))\" is not a URL; write redis://host:port (a password's "
                    + "reserved characters, such as # / @ ?, percent-encoded)")
        }
        guard scheme == "redis" || scheme == "rediss" else {
            throw .invalidConfiguration("the scheme must be redis:// or rediss:// (TLS), not \(scheme)://")
        }
        guard let host = components.host, !host.isEmpty else {
            throw .invalidConfiguration("\"\(Self.withoutCredentials(text))\" names no host")
        }
        let port = components.port ?? 6379
        guard (1...65535).contains(port) else { throw .invalidConfiguration("port \(port) is out of range") }
        var database = 0
        let path = components.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        if !path.isEmpty {
            guard let number = Int(path), number >= 0 else {
                // Quoted whole, without credentials: a password with a `/` written as is puts its
                // rest in the path (`redis://user:6379/pa@host` reads as port 6379, path "pa@host").
                throw .invalidConfiguration(
                    "the path of \"\(Self.withoutCredentials(text))\" is not a database number")
            }
            database = number
        }
        // `user` and `password` are already percent-decoded: decoding again would turn a
        // password's literal "%12" (written %2512) into a control character.
        let user = components.user.flatMap { $0.isEmpty ? nil : $0 }
        self.init(
            host: host, port: port, username: user, password: components.password,
            database: database, usesTLS: scheme == "rediss")
    }

    /// `text` with what may be a user and password (anything between `://` and the last `@`)
    /// replaced by `…`, for messages.
    static func withoutCredentials(_ text: String) -> String {
        guard let start = text.range(of: "://")?.upperBound, let at = text.range(of: "@", options: .backwards),
            at.lowerBound >= start
        else { return text }
        return String(text[..<start]) + "…" + String(text[at.lowerBound...])
    }

    /// `host:port` (never the password).
    public var description: String { "\(host):\(port)" }
}
