import Foundation
import HTTPTypes
import Testing

@testable import HTTPCaching

@Suite("Freshness and age (RFC 9111 §4.2)")
struct FreshnessTests {
    let date = HTTPDate.format(epoch)

    func lifetime(
        _ fields: [(String, String)], status: Int = 200, shared: Bool = false,
        heuristics: Freshness.Heuristics = .init()
    ) -> TimeInterval {
        let r = response(status, fields)
        return Freshness.lifetime(
            of: r, directives: CacheControl(fieldValues: r.headerFields[values: .cacheControl]), responseTime: epoch,
            shared: shared, heuristics: heuristics)
    }

    @Test("§4.2.1: s-maxage (shared only) over max-age over Expires")
    func precedence() {
        let fields = [
            ("Cache-Control", "max-age=60, s-maxage=600"), ("Date", date), ("Expires", HTTPDate.format(epoch + 6000)),
        ]
        #expect(lifetime(fields) == 60)
        #expect(lifetime(fields, shared: true) == 600)
        #expect(lifetime([("Date", date), ("Expires", HTTPDate.format(epoch + 6000))]) == 6000)
    }

    @Test("§5.3: an invalid Expires, such as 0, means already expired", arguments: ["0", "-1", "yesterday", ""])
    func invalidExpires(_ value: String) {
        #expect(lifetime([("Date", date), ("Expires", value)]) == 0)
    }

    @Test("§4.2.2: heuristic lifetime is 10% of Date − Last-Modified, capped, only where allowed")
    func heuristics() {
        let tenHoursAgo = HTTPDate.format(epoch - 36_000)
        #expect(lifetime([("Date", date), ("Last-Modified", tenHoursAgo)]) == 3_600)
        let longAgo = HTTPDate.format(epoch - 86_400 * 365)
        #expect(lifetime([("Date", date), ("Last-Modified", longAgo)]) == 86_400, "capped at one day")
        #expect(
            lifetime([("Date", date), ("Last-Modified", tenHoursAgo)], status: 302) == 0,
            "302 is not heuristically cacheable")
        #expect(
            lifetime([("Date", date), ("Last-Modified", tenHoursAgo), ("Cache-Control", "public")], status: 302)
                == 3_600)
        #expect(
            lifetime([("Date", date), ("Last-Modified", HTTPDate.format(epoch + 60))]) == 0,
            "Last-Modified in the future")
    }

    @Test("§4.2.2: a NaN or negative heuristic setting gives no heuristic lifetime, never a NaN one")
    func heuristicSettings() {
        // A NaN lifetime trapped the proxy's conversion of it to Cache-Status's ttl.
        let fields = [("Date", date), ("Last-Modified", HTTPDate.format(epoch - 36_000))]
        for heuristics in [
            Freshness.Heuristics(maximumLifetime: .nan), .init(fraction: .nan), .init(fraction: -0.1),
            .init(maximumLifetime: -1),
        ] {
            #expect(lifetime(fields, heuristics: heuristics) == 0)
        }
        #expect(lifetime(fields, heuristics: .init(maximumLifetime: .infinity)) == 3_600)
        #expect(lifetime(fields, heuristics: .init(fraction: .infinity)) == 86_400)
    }

    @Test("§4.2.3: age combines Age, response delay, apparent age and resident time")
    func age() {
        // Sent at T, received at T+2 with Age: 10 and a Date 5 s before receipt; now T+102.
        let r = response(200, [("Date", HTTPDate.format(epoch - 3)), ("Age", "10")])
        let s = stored(r, sent: epoch - 2, received: epoch)
        // apparent = 3, corrected age value = 10 + 2 = 12, initial = 12, resident = 100.
        #expect(Freshness.currentAge(of: s, now: epoch + 100) == 112)
    }

    @Test(
        "§4.2.3: a Date in the future gives no negative age",
        arguments: [TimeInterval(3_600), TimeInterval(86_400 * 365)])
    func futureDate(_ ahead: TimeInterval) {
        let s = stored(response(200, [("Date", HTTPDate.format(epoch + ahead))]))
        #expect(Freshness.currentAge(of: s, now: epoch) == 0)
    }

    @Test(
        "§5.1: an invalid Age is ignored; a list uses its first member",
        arguments: [
            ("abc", TimeInterval(0)), ("-5", 0), ("1.5", 0), ("30, 60", 30), ("99999999999999", 2_147_483_648),
        ] as [(String, TimeInterval)])
    func ageField(_ value: String, _ expected: TimeInterval) {
        #expect(Freshness.ageValue(of: response(200, [("Age", value)])) == expected)
    }
}

@Suite("Storability (RFC 9111 §3)")
struct StorabilityTests {
    func reason(_ resp: HTTPResponse, shared: Bool = false) -> Storability.Reason? {
        reason(request(), resp, shared: shared)
    }

    func reason(_ req: HTTPRequest, _ resp: HTTPResponse, shared: Bool = false) -> Storability.Reason? {
        Storability.reasonNotToStore(
            request: req, requestDirectives: CacheControl(fieldValues: req.headerFields[values: .cacheControl]),
            response: resp, directives: CacheControl(fieldValues: resp.headerFields[values: .cacheControl]),
            shared: shared)
    }

    @Test("§3: only GET responses are stored")
    func method() {
        #expect(reason(request(method: .post), response(200, [("Cache-Control", "max-age=60")])) == .method)
    }

    @Test(
        "§3: final statuses only; 206 and 304 are not stored",
        arguments: [(101, Storability.Reason.status), (206, .status), (304, .status)])
    func statuses(_ code: Int, _ expected: Storability.Reason) {
        #expect(reason(response(code, [("Cache-Control", "max-age=60")])) == expected)
    }

    @Test("§3: without explicit freshness, only heuristically cacheable statuses (or public)")
    func freshnessInformation() {
        #expect(reason(response(200)) == nil)
        #expect(reason(response(404)) == nil)
        #expect(reason(response(302)) == .noFreshnessInformation)
        #expect(reason(response(302, [("Cache-Control", "max-age=10")])) == nil)
        #expect(reason(response(500, [("Cache-Control", "public")])) == nil)
    }

    @Test("§5.2.1.5/§5.2.2.5: no-store in request or response")
    func noStore() {
        #expect(reason(response(200, [("Cache-Control", "no-store, max-age=60")])) == .noStore)
        #expect(reason(request("https://example.com/a", [("Cache-Control", "no-store")]), response(200)) == .noStore)
    }

    @Test("§5.2.2.7: private is stored by a private cache, not by a shared one")
    func privateResponses() {
        let r = response(200, [("Cache-Control", "private, max-age=60")])
        #expect(reason(r) == nil)
        #expect(reason(r, shared: true) == .privateResponse)
        // A field list naming nothing is the unqualified directive: it once withheld nothing,
        // and a shared cache stored one user's page for every user.
        for value in [#"private="", max-age=60"#, #"private=" , ", max-age=60"#, "private=, max-age=60"] {
            #expect(reason(response(200, [("Cache-Control", value)]), shared: true) == .privateResponse, "\(value)")
        }
    }

    @Test(
        "§3.5: a shared cache stores a response to an authorized request only with public, must-revalidate or s-maxage")
    func authorization() {
        let req = request("https://example.com/a", [("Authorization", "Bearer x")])
        #expect(reason(req, response(200, [("Cache-Control", "max-age=60")]), shared: true) == .authorization)
        #expect(reason(req, response(200, [("Cache-Control", "max-age=60")])) == nil)
        for allowing in ["public", "must-revalidate", "s-maxage=5"] {
            #expect(reason(req, response(200, [("Cache-Control", allowing)]), shared: true) == nil)
        }
    }

    @Test("§4.1: Vary: * is never stored")
    func varyStar() {
        #expect(reason(response(200, [("Cache-Control", "max-age=60"), ("Vary", "Accept, *")])) == .varyStar)
    }

    @Test("§5.2.2.3: must-understand ignores no-store for understood statuses, refuses others")
    func mustUnderstand() {
        #expect(reason(response(200, [("Cache-Control", "must-understand, no-store, max-age=60")])) == nil)
        #expect(reason(response(299, [("Cache-Control", "must-understand, no-store, max-age=60")])) == .mustUnderstand)
    }

    @Test("412 and 416 answer one request's preconditions or range: never stored, even with a lifetime")
    func preconditionAndRangeFailuresAreNotStored() {
        for code in [412, 416] {
            #expect(reason(response(code, [("Cache-Control", "public, max-age=600")])) == .status)
        }
    }

    @Test("§5.2.1.5: must-understand does not lift the request's no-store")
    func mustUnderstandKeepsTheRequestsNoStore() {
        let noStore = request("https://example.com/a", [("Cache-Control", "no-store")])
        for code in [200, 299] {
            #expect(reason(noStore, response(code, [("Cache-Control", "must-understand, max-age=60")])) == .noStore)
        }
    }
}
