import Foundation
import HTTPTypes
import TierCache
import TierCacheTesting

@testable import HTTPCaching

let epoch = Date(timeIntervalSince1970: 1_700_000_000)

/// An engine over one 1 MiB memory tier, on `clock` (private mode, the default configuration).
func memoryCache(clock: ManualCacheClock) throws -> HTTPCache {
    HTTPCache(
        storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]), configuration: .init(clock: clock.cacheClock))
}

func request(
    _ url: String = "https://example.com/a", method: HTTPRequest.Method = .get, _ fields: [(String, String)] = []
) -> HTTPRequest {
    var request = HTTPRequest(method: method, url: URL(string: url) ?? URL(fileURLWithPath: "/"))
    for (name, value) in fields {
        if let fieldName = HTTPField.Name(name) {
            request.headerFields.append(HTTPField(name: fieldName, value: value))
        }
    }
    return request
}

func response(_ status: Int = 200, _ fields: [(String, String)] = []) -> HTTPResponse {
    var response = HTTPResponse(status: .init(code: status))
    for (name, value) in fields {
        if let fieldName = HTTPField.Name(name) {
            response.headerFields.append(HTTPField(name: fieldName, value: value))
        }
    }
    return response
}

/// A response received at `received` (after a request sent at `sent`), stored then.
func stored(
    _ response: HTTPResponse, sent: Date = epoch, received: Date = epoch, request: HTTPRequest = request()
) -> StoredResponse {
    StoredResponse(
        response: response, body: Data("body".utf8), requestTime: sent, responseTime: received, storedAt: received,
        varyingFields: Vary.varyingFields(Vary.fieldNames(of: response), of: request))
}

func context(_ now: Date, shared: Bool = false) -> CacheDecision.Context {
    CacheDecision.Context(shared: shared, now: now)
}
