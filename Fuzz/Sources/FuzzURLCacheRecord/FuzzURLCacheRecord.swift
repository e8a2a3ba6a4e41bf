import Foundation
import FuzzDriver
import TierCache

@testable import HTTPCachingFoundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URL a decoded record is answered for, and the request it is matched against (with a value
/// for a field records may vary on), as a lookup does.
let url = URL(string: "https://a.example/page")
let request: URLRequest? = url.map {
    var request = URLRequest(url: $0)
    request.setValue("en", forHTTPHeaderField: "Accept-Language")
    return request
}

/// `TieredURLCache`'s records (`URLCacheRecord`): magic, header length, JSON header, body. What
/// decodes is matched against a request and made an `HTTPURLResponse`, and survives encoding.
@_cdecl("FuzzURLCacheRecord_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    if let directory = seedDirectory(argc, argv) {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let records = [
            URLCacheRecord(
                status: 200, fields: [["Content-Type", "text/plain"], ["Vary", "Accept-Language"]],
                userInfo: ["k": "v"], storagePolicy: .allowed, storedAt: date,
                varying: [.init(name: "accept-language", value: "en")], body: Data("hello".utf8)),
            URLCacheRecord(
                status: 404, fields: [], userInfo: [:], storagePolicy: .allowedInMemoryOnly, storedAt: date,
                body: Data()),
            URLCacheRecord(
                status: 301, fields: [["Location", "/elsewhere"], ["Cache-Control", "max-age=60"]], userInfo: [:],
                storagePolicy: .allowed, storedAt: date, varying: [], body: Data("moved".utf8)),
        ]
        var written = true
        for (index, record) in records.enumerated() {
            guard let bytes = try? record.encode() else { return 1 }
            written = writeSeed(bytes, named: "record\(index)", in: directory) && written
        }
        return written ? 0 : 1
    }
    return runFuzzer(argc, argv) { data, size in
        guard let record = try? URLCacheRecord.decode(bytes(data, size)), let url, let request else { return 0 }
        _ = record.matches(request)
        _ = record.urlResponse(for: url)
        if let encoded = try? record.encode(), (try? URLCacheRecord.decode(encoded)) != record {
            fatalError("a record does not survive encoding")
        }
        return 0
    }
}
