import Foundation
import FuzzDriver
import TierCache
import TierCacheCompression
import TierCacheRecords

/// The codec the tiers read records with (shared across inputs, as in a tier).
let codec = ZstdCodec(level: 1)
/// A dictionary (raw content, as an app may provide) for records that name one: frames made with
/// it, and frames damaged or made with another, go through zstd's dictionary decoder.
let dictionary = try? ZstdDictionary(
    bytes: Array(
        String(repeating: "{\"id\":1,\"name\":\"Ada Lovelace\",\"tags\":[\"new\",\"sale\"]},", count: 40).utf8),
    level: 1)

/// The disk record format (LMDB and Redis values): header, checksum, zstd payload.
@_cdecl("FuzzStoredRecord_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    if let directory = seedDirectory(argc, argv), let codec {
        let values: [[UInt8]] = [
            [], Array("{\"id\":42}".utf8), Array(repeating: 7, count: 3000),
            (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 97) },
        ]
        var written = true
        for (index, value) in values.enumerated() {
            let entry = CacheEntry(
                value: value, storedAt: Date(timeIntervalSince1970: 1_800_000_000),
                expiresAt: index % 2 == 0 ? nil : Date(timeIntervalSince1970: 1_900_000_000))
            let record = EntryRecord.encode(
                entry, fullKey: index % 2 == 0 ? Array("GET https://a.example/\(index)".utf8) : nil, codec: codec)
            written = writeSeed(record, named: "record\(index)", in: directory) && written
            if let dictionary {
                let withDictionary = EntryRecord.encode(
                    entry, fullKey: nil, codec: codec,
                    dictionary: EntryRecord.Dictionary(id: UInt16(index + 1), dictionary: dictionary))
                written =
                    writeSeed(withDictionary, named: "dictionary-record\(index)", in: directory) && written
            }
        }
        return written ? 0 : 1
    }
    return runFuzzer(argc, argv) { data, size in
        guard let codec else { return 0 }
        bytes(data, size).withUnsafeBytes { raw in
            _ = SealedEnvelope.keyID(of: raw)
            guard let header = try? EntryRecord.header(of: raw) else { return }
            // A tier of 64 MiB: a header declaring more is refused before it is allocated (without
            // the bound, one input of a few hundred bytes made the harness allocate 4 GiB).
            _ = try? EntryRecord.value(
                of: header, codec: codec, dictionary: header.dictionaryID == nil ? nil : dictionary,
                largestValue: EntryRecord.largestValue(inCapacity: 64 << 20))
        }
        return 0
    }
}
