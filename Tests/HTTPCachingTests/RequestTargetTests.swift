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
}
