import Foundation
import Testing
import TierCache
import TierCacheRedis

/// TLS to a real redis-server that listens on TLS only, with a password and an ACL user
/// (`scripts/redis-servers` starts it with certificates from a throwaway CA and sets
/// TIERCACHE_REDIS_TLS_URL and TIERCACHE_REDIS_TLS_CA).
@Suite(
    .enabled(if: TLSServer.url != nil, "TIERCACHE_REDIS_TLS_URL is not set: scripts/test starts a TLS redis-server"),
    .timeLimit(.minutes(5)))
struct RedisTLSTests {
    private func tier(_ endpoint: RedisEndpoint, tls: RedisTLS?, prefix: String = "tls:") throws -> RedisTier {
        try RedisTier(
            configuration: .init(
                deployment: .standalone(endpoint), keyPrefix: prefix, capacity: 1 << 20,
                connectTimeout: .seconds(2), commandTimeout: .seconds(2), failureMode: .throwErrors, tls: tls))
    }

    private func endpoint() throws -> RedisEndpoint {
        try RedisEndpoint(url: try #require(TLSServer.url))
    }

    private func trustingTheTestCA() throws -> RedisTLS {
        RedisTLS(trust: .certificateFile(try #require(TLSServer.certificateAuthority)))
    }

    @Test("rediss:// with the password, trusting the server's CA: entries round-trip")
    func roundTripOverTLS() async throws {
        let endpoint = try endpoint()
        #expect(endpoint.usesTLS)
        let tier = try tier(endpoint, tls: try trustingTheTestCA())
        let value = Array(String(repeating: "{\"secret\":\"over TLS\"}", count: 50).utf8)
        let key = try CacheKey("round-trip")
        #expect(try await tier.store(CacheEntry(value: value, storedAt: Date()), forKey: key) == .stored)
        #expect(try await tier.entry(forKey: key)?.value == value)
        try await tier.removeEntry(forKey: key)
        #expect(try await tier.entry(forKey: key) == nil)
    }

    @Test("The name verified can differ from the address connected to: localhost, which the certificate carries")
    func serverNameOverride() async throws {
        var settings = try trustingTheTestCA()
        settings.serverName = "localhost"
        let tier = try tier(try endpoint(), tls: settings)
        #expect(try await tier.entry(forKey: CacheKey("absent")) == nil)
    }

    @Test("An ACL user logs in over TLS and reaches only its keys")
    func aclUserOverTLS() async throws {
        var endpoint = try endpoint()
        endpoint.username = "tlsuser"
        endpoint.password = "tlsuser-secret"
        let own = try tier(endpoint, tls: try trustingTheTestCA(), prefix: "tls-acl:")
        let key = try CacheKey("mine")
        #expect(try await own.store(CacheEntry(value: [7], storedAt: Date()), forKey: key) == .stored)
        #expect(try await own.entry(forKey: key)?.value == [7])
        // The user's ACL allows only keys under tls-acl:; Redis refuses the others (NOPERM).
        let other = try tier(endpoint, tls: try trustingTheTestCA(), prefix: "elsewhere:")
        await #expect(throws: TierCacheError.self) { try await other.entry(forKey: key) }
    }

    @Test(
        "A wrong password, an untrusted certificate, or plain text to the TLS port: an error, never a hang or a value")
    func refusals() async throws {
        var wrongPassword = try endpoint()
        wrongPassword.password = "not-the-password"
        let key = try CacheKey("k")
        await #expect(throws: TierCacheError.self) {
            try await tier(wrongPassword, tls: try trustingTheTestCA()).entry(forKey: key)
        }
        // The system's trust roots do not include the throwaway CA: the handshake fails.
        await #expect(throws: TierCacheError.self) {
            try await tier(try endpoint(), tls: RedisTLS()).entry(forKey: key)
        }
        var plain = try endpoint()
        plain.usesTLS = false
        await #expect(throws: TierCacheError.self) { try await tier(plain, tls: nil).entry(forKey: key) }
    }

    @Test("TLS settings that cannot be loaded fail when the tier is made, with invalidConfiguration")
    func badSettings() throws {
        let endpoint = RedisEndpoint(host: "127.0.0.1", port: 1, usesTLS: true)
        let missingFile = RedisTLS(trust: .certificateFile("/nonexistent/ca.pem"))
        #expect { try tier(endpoint, tls: missingFile) } throws: {
            ($0 as? TierCacheError)?.code == .invalidConfiguration
        }
        let notPEM = FileManager.default.temporaryDirectory.appendingPathComponent(
            "not-a-certificate-\(UUID().uuidString).pem")
        try Data("this is not a certificate".utf8).write(to: notPEM)
        defer { try? FileManager.default.removeItem(at: notPEM) }
        #expect { try tier(endpoint, tls: RedisTLS(trust: .certificateFile(notPEM.path))) } throws: {
            ($0 as? TierCacheError)?.code == .invalidConfiguration
        }
        let halfAClientCertificate = RedisTLS(clientCertificateFile: notPEM.path)
        #expect { try tier(endpoint, tls: halfAClientCertificate) } throws: {
            ($0 as? TierCacheError)?.code == .invalidConfiguration
        }
    }

    @Test("rediss:// parses as TLS; other schemes are refused")
    func schemes() throws {
        #expect(try RedisEndpoint(url: "rediss://:pw@cache.internal:6380").usesTLS)
        #expect(try !RedisEndpoint(url: "redis://cache.internal").usesTLS)
        #expect(throws: RedisError.self) { try RedisEndpoint(url: "http://cache.internal") }
    }
}

/// The TLS server `scripts/redis-servers` started, if any.
enum TLSServer {
    static var url: String? { ProcessInfo.processInfo.environment["TIERCACHE_REDIS_TLS_URL"] }
    static var certificateAuthority: String? { ProcessInfo.processInfo.environment["TIERCACHE_REDIS_TLS_CA"] }
}

@Suite("The README's Redis TLS example")
struct RedisTLSReadmeExampleTests {
    @Test("It builds a tier; without its CA file, creating it fails with invalidConfiguration, not later")
    func readmeExample() throws {
        let caFileExists = FileManager.default.fileExists(atPath: "/etc/redis/ca.pem")
        do {
            let redis = try RedisTier(
                configuration: .init(
                    deployment: .standalone(try RedisEndpoint(url: "rediss://cache:secret@redis.internal:6380")),
                    capacity: 4 << 30,
                    tls: RedisTLS(trust: .certificateFile("/etc/redis/ca.pem"))))
            #expect(caFileExists, "made a tier without its CA file")
            _ = redis
        } catch let error as TierCacheError {
            #expect(!caFileExists && error.code == .invalidConfiguration, "\(error)")
        }
    }
}
