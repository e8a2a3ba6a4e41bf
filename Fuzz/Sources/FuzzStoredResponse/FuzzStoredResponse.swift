import Foundation
import FuzzDriver
import HTTPTypes
import TierCache

@testable import HTTPCaching

/// The HTTP layer's stored-response codec (responses, with their tag stamps and soft-purge mark,
/// and Vary variant indexes), and the tags' purge records.
@_cdecl("FuzzStoredResponse_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    if let directory = seedDirectory(argc, argv) {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let response = HTTPResponse(
            status: .ok, headerFields: [.cacheControl: "max-age=600", .eTag: "\"v1\"", .vary: "Accept-Language"])
        let entries: [StoredEntry] = [
            .response(
                StoredResponse(
                    response: response, body: Data("hello".utf8), requestTime: date, responseTime: date, storedAt: date,
                    varyingFields: [.init(name: "accept-language", value: "en")], userInfo: ["k": "v"])),
            .response(
                StoredResponse(
                    response: HTTPResponse(status: .notFound), body: Data(), requestTime: date, responseTime: date,
                    storedAt: date,
                    storagePolicy: .allowedInMemoryOnly)),
            .variants(
                VariantIndex(
                    fieldNames: ["accept-language", "accept-encoding"],
                    variantKeys: ["GET https://a.example/ en", "GET https://a.example/ de"].compactMap {
                        try? CacheKey($0)
                    })),
        ]
        var tagged = StoredResponse(
            response: response, body: Data("tagged".utf8), requestTime: date, responseTime: date, storedAt: date)
        tagged.tagStamps = [TagStamp(tag: "product-1", epoch: 42), TagStamp(tag: "catalog", epoch: 7)]
        tagged.invalidatedAt = date
        tagged.answeredAuthorization = true  // format version 3, with its flags byte
        var written = writeSeed(
            StoredEntryCodec.encode(.response(tagged)), named: "tagged", in: directory)
        written =
            writeSeed(
                TagRecordCodec.encode(TagRecord.fresh().softlyPurged(at: date)), named: "tag-record",
                in: directory) && written
        for (index, entry) in entries.enumerated() {
            written = writeSeed(StoredEntryCodec.encode(entry), named: "entry\(index)", in: directory) && written
        }
        return written ? 0 : 1
    }
    return runFuzzer(argc, argv) { data, size in
        let input = bytes(data, size)
        if let entry = try? StoredEntryCodec.decode(input) {
            // What decodes must encode again to the same bytes' meaning: decode the re-encoding.
            _ = try? StoredEntryCodec.decode(StoredEntryCodec.encode(entry))
        }
        if let record = TagRecordCodec.decode(input), TagRecordCodec.decode(TagRecordCodec.encode(record)) != record {
            fatalError("a tag record does not survive encoding")
        }
        return 0
    }
}
