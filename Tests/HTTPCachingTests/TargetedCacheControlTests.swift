import HTTPCaching
import Testing

/// RFC 9213 §2.1: a targeted field is a Structured Field Dictionary (RFC 8941 §3.2); a field that
/// does not parse as one, or whose known directives have values of the wrong type, is ignored as
/// a whole (nil), and the cache falls back to Cache-Control.
@Suite("Targeted cache control (RFC 9213)")
struct TargetedCacheControlTests {
    @Test(
        "Valid Dictionaries become the same directives in Cache-Control syntax",
        arguments: [
            (["max-age=60"], "max-age=60"),
            (
                ["max-age=60, s-maxage=30, stale-while-revalidate=10, stale-if-error=0"],
                "max-age=60, s-maxage=30, stale-while-revalidate=10, stale-if-error=0"
            ),
            (["no-store"], "no-store"),
            (["must-revalidate, public, immutable"], "must-revalidate, public, immutable"),
            // A Boolean false member is an absent directive.
            (["no-store=?0, max-age=5"], "max-age=5"),
            (["no-store=?1"], "no-store"),
            // Field names for no-cache and private: an Inner List of Strings or Tokens.
            (["private=(\"set-cookie\" x-a)"], "private=\"set-cookie, x-a\""),
            // RFC 9213 §3.1's example: a directive nobody knows keeps the field non-empty.
            (["none"], "none"),
            // Parameters on members are ignored (§2.1).
            (["max-age=60;foo=bar"], "max-age=60"),
            // Field lines are combined with commas before parsing (RFC 8941 §4.2).
            (["max-age=60", "no-transform"], "max-age=60, no-transform"),
            // Unknown directives keep their values where Cache-Control can say them.
            (["x-ext=3, x-token=abc, x-text=\"a b\", x-flag"], "x-ext=3, x-token=abc, x-text=\"a b\", x-flag"),
            (["max-age=60, max-age=30"], "max-age=30"),
        ])
    func valid(fields: [String], expected: String) {
        #expect(TargetedCacheControl.cacheControlValue(of: fields) == expected)
    }

    @Test(
        "Invalid fields are ignored as a whole",
        arguments: [
            ["max-age=\"60\""],  // a String where an Integer belongs
            ["max-age=1.5"],  // a Decimal
            ["max-age=-1"],  // negative delta-seconds
            ["max-age=(60)"],  // an Inner List
            ["no-store=3"],  // an Integer where a Boolean belongs
            ["public=\"yes\""],
            ["private=(1 2)"],  // field names must be Strings or Tokens
            ["max-age=60, no-store=tok"],
            ["Max-Age=60"],  // Dictionary keys are lower case: a parsing error
            ["max-age=60,"],  // a trailing comma
            ["max-age=60 no-store"],
            [""], ["   "], [],
        ])
    func invalid(fields: [String]) {
        #expect(TargetedCacheControl.cacheControlValue(of: fields) == nil)
    }

    @Test("A field longer than the limit is ignored, one at the limit is read")
    func length() {
        let member = "x-a, "
        let atLimit =
            String(repeating: member, count: TargetedCacheControl.maximumFieldLength / member.utf8.count - 2)
            + "max-age=9"
        #expect(atLimit.utf8.count <= TargetedCacheControl.maximumFieldLength)
        #expect(TargetedCacheControl.cacheControlValue(of: [atLimit])?.hasSuffix("max-age=9") == true)
        let over =
            String(repeating: member, count: TargetedCacheControl.maximumFieldLength / member.utf8.count + 1)
            + "max-age=9"
        #expect(TargetedCacheControl.cacheControlValue(of: [over]) == nil)
    }
}

/// RFC 9211 §2: Cache-Status is a List whose member is the cache's name (a token) with
/// parameters; the examples are the RFC's own (§3), in RFC 8941's canonical serialisation
/// (§4.1.1.2: parameters follow ";" with no space).
@Suite("Cache-Status (RFC 9211)")
struct CacheStatusTests {
    @Test func serialisesTheRFCsExamples() {
        var hit = CacheStatus(cacheName: "ExampleCache")
        hit.hit = true
        #expect(hit.description == "ExampleCache;hit")
        var miss = CacheStatus(cacheName: "ExampleCache")
        miss.forward = .uriMiss
        miss.stored = true
        #expect(miss.description == "ExampleCache;fwd=uri-miss;stored")
        var revalidated = CacheStatus(cacheName: "ExampleCache")
        revalidated.forward = .stale
        revalidated.forwardStatus = 304
        revalidated.ttl = -30
        revalidated.detail = "stale-if-error"
        #expect(revalidated.description == "ExampleCache;fwd=stale;fwd-status=304;ttl=-30;detail=stale-if-error")
    }

    @Test("A key is a String: quotes and backslashes escaped, what a String cannot hold replaced")
    func keyIsEscaped() {
        var status = CacheStatus(cacheName: "TierCache")
        status.key = "GET http://a/\"q\"\\é"
        #expect(status.description == #"TierCache;key="GET http://a/\"q\"\\%""#)
    }
}
