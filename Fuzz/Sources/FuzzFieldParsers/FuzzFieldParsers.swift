import Foundation
import FuzzDriver
import HTTPTypes

@testable import HTTPCaching

/// The field parsers of the RFC 9111 core: Cache-Control directives, HTTP-dates, field-name lists
/// (Vary, Connection, no-cache="..."), Vary matching and its preference-list normalisation,
/// targeted cache-control Dictionaries (RFC 9213), Range, Content-Range and If-Range, on one
/// input split at NUL bytes.
@_cdecl("FuzzFieldParsers_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        let parts = bytes(data, size).split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        let directives = CacheControl(fieldValues: parts)
        _ = directives.maxAge
        _ = HTTPDate.parse(parts[0], now: Date(timeIntervalSince1970: 1_800_000_000))
        for part in parts {
            _ = DirectiveParser.fieldNames(part)
            _ = Vary.normalizedPreferenceList(part)
            _ = ByteRange(rangeField: part)?.bounds(in: 1 << 20)
            _ = ContentRange(field: part)
        }
        _ = TargetedCacheControl.cacheControlValue(of: parts)
        var response = HTTPResponse(status: .ok)
        var request = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/")
        for (index, part) in parts.enumerated() where !part.isEmpty {
            // Field values with characters HTTP forbids are dropped, as the transport would.
            response.headerFields.append(HTTPField(name: .vary, value: part))
            if let name = HTTPField.Name(parts[(index + 1) % parts.count]) {
                request.headerFields.append(HTTPField(name: name, value: part))
            }
        }
        if let first = parts.first { _ = ByteRange.ifRange(first, allowsRangeOf: response) }
        let names = Vary.fieldNames(of: response)
        // The one-name lookup scans the request's fields; the library calls it for a few names
        // and indexes the fields above that (`varyingFields`), so the harness does the same.
        for name in names.prefix(Vary.indexedLookupThreshold) { _ = Vary.normalizedValue(of: name, in: request) }
        _ = Vary.varyingFields(names, of: request)
        return 0
    }
}
