import Testing

@testable import HTTPCaching

@Suite("Cache-Control parsing (RFC 9111 §5.2)")
struct CacheControlTests {
    @Test("§5.2: names are case-insensitive, whitespace is optional, values may be quoted")
    func basics() {
        let directives = CacheControl(#"Public ,  MAX-AGE=3600,stale-while-revalidate="60", no-transform"#)
        #expect(directives.isPublic && directives.noTransform)
        #expect(directives.maxAge == 3600)
        #expect(directives.staleWhileRevalidate == 60)
    }

    @Test("§5.2.2.4/§5.2.2.7: no-cache and private with field names keep the names, quoted commas included")
    func qualifiedDirectives() {
        let directives = CacheControl(#"no-cache="Set-Cookie, X-Session", private="X-User""#)
        #expect(!directives.noCache && !directives.isPrivate)
        #expect(directives.noCacheFieldNames == ["set-cookie", "x-session"])
        #expect(directives.privateFieldNames == ["x-user"])
    }

    @Test("§5.2.2.4/§5.2.2.7: a field list naming nothing is the unqualified directive")
    func emptyFieldLists() {
        for value in [#"no-cache="", private="""#, #"no-cache=" , ", private=",""#, "no-cache=, private="] {
            let directives = CacheControl(value)
            #expect(directives.noCache && directives.isPrivate, "\(value)")
            #expect(directives.noCacheFieldNames.isEmpty && directives.privateFieldNames.isEmpty, "\(value)")
        }
    }

    @Test("§1.2.2: delta-seconds past 2^31 are 2^31", arguments: ["2147483648", "99999999999999999999999"])
    func overflow(_ value: String) {
        #expect(CacheControl("max-age=\(value)").maxAge == 2_147_483_648)
    }

    @Test("§4.2.1: an invalid max-age makes the response stale", arguments: ["-1", "1.5", "abc", "", "\"\"", "0x10"])
    func invalidMaxAge(_ value: String) {
        #expect(CacheControl("max-age=\(value)").maxAge == 0)
    }

    @Test("§4.2.1: conflicting duplicates are stale; identical duplicates stand")
    func duplicates() {
        #expect(CacheControl(fieldValues: ["max-age=60", "max-age=120"]).maxAge == 0)
        #expect(CacheControl("max-age=60, max-age=60").maxAge == 60)
        #expect(CacheControl("s-maxage=10, s-maxage=20").sharedMaxAge == 0)
    }

    @Test("§5.2.1.2: max-stale without a value accepts any staleness")
    func maxStale() {
        #expect(CacheControl("max-stale").maxStale == Int.max)
        #expect(CacheControl("max-stale=30").maxStale == 30)
        #expect(CacheControl("max-stale=x").maxStale == 0)
    }

    @Test("§5.2.3: unknown extensions are kept")
    func extensions() {
        let directives = CacheControl(#"community="UCI", foo, max-age=5"#)
        #expect(directives.extensions == [.init(name: "community", value: "UCI"), .init(name: "foo", value: nil)])
        #expect(directives.maxAge == 5)
    }

    @Test(
        "Malformed and huge values never crash",
        arguments: [
            ",,,", "=", "=5", "\"unterminated, max-age=5", "max-age=5,,,no-store",
            String(repeating: "a=b,", count: 16_384),
            "max-age=\u{00E9}", "ünïcödé, no-store",
        ])
    func malformed(_ value: String) {
        _ = CacheControl(value)
    }

    @Test(
        "§5.2.2.4, §5.2.2.7: a qualified no-cache or private that lists anything but field names reads as unqualified",
        arguments: [#"private="X-User, max-age=0"#, #"private="""#, #"private="X User""#, #"private="X-User,""#])
    func malformedQualifiedDirective(_ value: String) {
        let directives = CacheControl(value)
        let valid = value == #"private="X-User,""#
        #expect(directives.isPrivate == !valid)
        #expect(directives.privateFieldNames == (valid ? ["x-user"] : []))
        let noCache = CacheControl(value.replacingOccurrences(of: "private", with: "no-cache"))
        #expect(noCache.noCache == !valid && noCache.noCacheFieldNames == (valid ? ["x-user"] : []))
    }

    @Test("Quoted commas do not split, escapes are resolved")
    func quoting() {
        #expect(DirectiveParser.directives(in: #"a="x, y", b="q\"q""#).map(\.value) == ["x, y", "q\"q"])
    }
}

@Suite("HTTP dates (RFC 9110 §5.6.7)")
struct HTTPDateTests {
    let expected = HTTPDate.makeDate(year: 1994, month: 11, day: 6, hour: 8, minute: 49, second: 37)

    @Test(
        "All three formats parse to the same instant",
        arguments: [
            "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            "  Sun, 06 Nov 1994 08:49:37 GMT ",
            // Names and zone in any case (§5.6.7 asks recipients to be robust; browsers are).
            "SUN, 06 Nov 1994 08:49:37 GMT", "Sun, 06 NOV 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 gMT",
            "sunday, 06-nov-94 08:49:37 gmt", "SUN NOV  6 08:49:37 1994",
        ])
    func formats(_ text: String) throws {
        let now = try #require(HTTPDate.makeDate(year: 2026, month: 1, day: 1, hour: 0, minute: 0, second: 0))
        #expect(HTTPDate.parse(text, now: now) == expected)
    }

    @Test(
        "Invalid dates are nil",
        arguments: [
            "0", "", "-1", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 PST", "Thu, 29 Feb 2001 00:00:00 GMT", "tomorrow",
            // Strict beyond case: another zone, a two-digit IMF year, no comma, doubled spaces,
            // dashes in an IMF-fixdate, periods in the time, a one-digit hour, two dates in one.
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 AEST", "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun 06 Nov 1994 08:49:37 GMT", "Sun, 06  Nov  1994 08:49:37 GMT", "Sun, 06-Nov-1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08.49.37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:38 GMT",
        ])
    func invalid(_ text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test("Formatting gives IMF-fixdate and round-trips")
    func format() throws {
        let date = try #require(expected)
        #expect(HTTPDate.format(date) == "Sun, 06 Nov 1994 08:49:37 GMT")
        let leap = try #require(HTTPDate.parse("Thu, 29 Feb 2024 23:59:59 GMT"))
        #expect(HTTPDate.parse(HTTPDate.format(leap)) == leap)
    }

    @Test("RFC 850 two-digit years more than 50 years ahead are in the past century")
    func twoDigitYears() throws {
        let now = try #require(HTTPDate.makeDate(year: 2026, month: 6, day: 1, hour: 0, minute: 0, second: 0))
        #expect(
            HTTPDate.parse("Monday, 01-Jan-90 00:00:00 GMT", now: now)
                == HTTPDate.makeDate(year: 1990, month: 1, day: 1, hour: 0, minute: 0, second: 0))
        #expect(
            HTTPDate.parse("Friday, 01-Jan-30 00:00:00 GMT", now: now)
                == HTTPDate.makeDate(year: 2030, month: 1, day: 1, hour: 0, minute: 0, second: 0))
    }
}
