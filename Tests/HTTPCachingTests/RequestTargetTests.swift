import Foundation
import HTTPTypes
import Testing

@testable import HTTPCaching

/// A request's target as it goes to an origin: only the bytes a URI may not hold are encoded, so
/// that Foundation's `URL` takes the string as it is.
@Suite("RequestTarget: the absolute URI sent to an origin")
struct RequestTargetTests {
    @Test(
        "Bytes a URI may not hold are percent-encoded once; valid escapes and allowed bytes stay",
        arguments: [
            ("/search?q=caf%C3%A9&tag[]=new", "/search?q=caf%C3%A9&tag%5B%5D=new"),
            ("/a b|c^{d}", "/a%20b%7Cc%5E%7Bd%7D"),
            ("/100%", "/100%25"), ("/%zz%4", "/%25zz%254"), ("/caf\u{E9}", "/caf%C3%A9"),
            ("/p;x=1/q:@!$&'()*+,=~-._?k=v/w", "/p;x=1/q:@!$&'()*+,=~-._?k=v/w"),
        ])
    func encodesOnlyWhatIsNotAllowed(target: String, sent: String) throws {
        let request = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: target)
        let uri = try #require(RequestTarget.absoluteURI(of: request))
        #expect(uri == "https://example.com" + sent)
        // Foundation keeps it as it is (it encoded an invalid one a second time, `%` included).
        #expect(URL(string: uri)?.absoluteString == uri)
    }

    @Test("A fragment is left out, an empty target is /, and no authority gives no URI")
    func edges() {
        let fragment = HTTPRequest(method: .get, scheme: "http", authority: "a", path: "/p?q#frag")
        #expect(RequestTarget.absoluteURI(of: fragment) == "http://a/p?q")
        let query = HTTPRequest(method: .get, scheme: "http", authority: "a", path: "?q")
        #expect(RequestTarget.absoluteURI(of: query) == "http://a/?q")
        #expect(
            RequestTarget.absoluteURI(of: HTTPRequest(method: .get, scheme: "http", authority: "", path: "/")) == nil)
    }

    /// The key kept the raw target while the origin got it encoded: `/a|b` from a browser and
    /// `/a%7Cb` from a purge script were two entries of one resource, and purging one left the
    /// other served.
    @Test(
        "The forms of one target an origin cannot tell apart share a key",
        arguments: [
            ["/a|b", "/a%7Cb", "/a|b#frag"], ["/search?tag[]=new", "/search?tag%5B%5D=new"], ["/100%", "/100%25"],
        ])
    func equivalentTargetsShareAKey(targets: [String]) {
        let keys = Set(targets.map { HTTPCacheKey.defaultKey(scheme: "https", authority: "example.com", path: $0) })
        #expect(keys.count == 1, "\(keys)")
    }

    @Test("A target written as a URI keys as before: escapes as written, in either case")
    func keyFormLeavesWrittenTargets() {
        #expect(RequestTarget.keyForm("/p;x=1/q:@!$&'()*+,=~-._?k=v%C3%A9") == nil)
        #expect(RequestTarget.keyForm("/%e4%b8%ad") == nil, "the origin gets lower-case escapes as written")
        #expect(RequestTarget.keyForm("/a%41") == nil, "an escape of an unreserved byte is not decoded")
        #expect(RequestTarget.keyForm("/p?q#frag") == "/p?q")
        #expect(HTTPCacheKey.keepsTargetAsWritten("/a%7Cb") && !HTTPCacheKey.keepsTargetAsWritten("/a|b"))
        #expect(
            HTTPCacheKey.defaultKey(scheme: "https", authority: "example.com", path: "/a%41")
                != HTTPCacheKey.defaultKey(scheme: "https", authority: "example.com", path: "/aA"))
    }
}
