import Foundation
import HTTPTypes
import Testing

@testable import HTTPCaching

/// A transport whose client followed redirects marks what it reached elsewhere as not to be
/// stored; the comparison of URLs is by normalised key, so that the usual forms of one URL are
/// not taken for a redirect.
@Suite("Responses reached through redirects")
struct RedirectedResponseTests {
    func request(_ scheme: String, _ authority: String, _ path: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: scheme, authority: authority, path: path)
    }

    @Test(
        "A URL keys as the request it was sent for, in each of its usual forms",
        arguments: [
            ("http://127.0.0.1:8080/a?b=c", "127.0.0.1:8080", "/a?b=c"),
            ("HTTP://Shop.Example:80/a", "shop.example", "/a"),
            ("https://shop.example", "shop.example:443", "/"),
            ("http://[::1]:8080/x", "[::1]:8080", "/x"),
            ("http://shop.example/a%20b?q=%2F", "shop.example", "/a%20b?q=%2F"),
            ("http://shop.example/a#fragment", "shop.example", "/a"),
        ])
    func sameResource(url: String, authority: String, path: String) throws {
        let url = try #require(URL(string: url))
        let scheme = url.scheme?.lowercased() ?? ""
        #expect(HTTPCacheKey.identifies(url, sameAs: request(scheme, authority, path)))
    }

    @Test(
        "Another path, query, host, port or scheme is another resource",
        arguments: [
            "http://shop.example/login", "http://shop.example/account?x=1", "http://other.example/account",
            "http://shop.example:8080/account", "https://shop.example/account", "/account",
        ])
    func otherResource(url: String) throws {
        #expect(
            !HTTPCacheKey.identifies(
                try #require(URL(string: url)), sameAs: request("http", "shop.example", "/account")))
    }

    @Test("Marked no-store only when reached elsewhere; the response's other fields are kept")
    func marking() throws {
        var response = HTTPResponse(status: .ok)
        response.headerFields[.cacheControl] = "max-age=300"
        response.headerFields[.contentType] = "text/html"
        let account = request("http", "shop.example", "/account")
        let login = try #require(URL(string: "http://shop.example/login"))
        let same = try #require(URL(string: "http://shop.example/account"))
        #expect(HTTPCache.unstorableIfRedirected(response, for: account, reachedAt: nil) == response)
        #expect(HTTPCache.unstorableIfRedirected(response, for: account, reachedAt: same) == response)
        let marked = HTTPCache.unstorableIfRedirected(response, for: account, reachedAt: login)
        #expect(marked.headerFields[values: .cacheControl] == ["no-store"])
        #expect(marked.headerFields[.contentType] == response.headerFields[.contentType])
        // must-understand would override no-store (RFC 9111 §5.2.2.3): the field is replaced.
        response.headerFields[.cacheControl] = "max-age=300, must-understand"
        let understood = HTTPCache.unstorableIfRedirected(response, for: account, reachedAt: login)
        let directives = CacheControl(fieldValues: understood.headerFields[values: .cacheControl])
        #expect(directives.noStore && !directives.mustUnderstand)
    }

    @Test("A request sent again after a redirected 304 loses the validators a cache adds, and nothing else")
    func withoutValidators() {
        var request = request("http", "shop.example", "/account")
        request.headerFields[.ifNoneMatch] = "\"v1\""
        request.headerFields[.ifModifiedSince] = "Tue, 01 Dec 2026 10:00:00 GMT"
        request.headerFields[.acceptLanguage] = "fr"
        let unconditional = HTTPCache.withoutValidators(request)
        #expect(unconditional.headerFields[.ifNoneMatch] == nil && unconditional.headerFields[.ifModifiedSince] == nil)
        #expect(unconditional.headerFields[.acceptLanguage] == "fr" && unconditional.path == "/account")
    }
}
