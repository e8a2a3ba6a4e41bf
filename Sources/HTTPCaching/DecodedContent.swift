import Foundation
import HTTPTypes

/// What a response says of a body its transport has already decoded.
///
/// URLSession removes the content codings it knows (gzip and deflate everywhere, Brotli on
/// Apple's platforms and where libcurl has it) before it hands the body over, and so does
/// AsyncHTTPClient made with `decompression: .enabled` (gzip and deflate), but both leave the
/// response's `Content-Encoding` and `Content-Length` as the server sent them. Stored that way, a
/// response would describe bytes it does not carry: a client honouring `Content-Encoding` would
/// decode plain text as gzip, a range answer cut from the body would be labelled gzip, and
/// `Content-Length` would not be the body's length.
package enum DecodedContent {
    /// The content codings URLSession decodes.
    package static let urlSessionCodings: Set<String> = ["gzip", "x-gzip", "deflate", "br"]
    /// The content codings AsyncHTTPClient's decompression (SwiftNIO's) decodes: one layer of
    /// one of these.
    package static let asyncHTTPClientCodings: Set<String> = ["gzip", "deflate"]

    /// `response` to `request` as it describes `body`: when a transport that decodes `codings`
    /// (at most `layers` of them stacked) decoded the content, without `Content-Encoding` and with `Content-Length` the body's size;
    /// otherwise unchanged.
    ///
    /// A response without content (to HEAD, a 204 or a 304) is left as it is: the app receives the
    /// fields the server sent. (A HEAD naming a coding the stored, decoded GET lacks is not taken
    /// for a changed resource: the engine compares lengths only between responses of one coding.)
    ///
    /// The body counts as decoded when the response names only codings in `codings` and the body
    /// is not what the response announced: a `Content-Length` other than the body's, or, without
    /// `Content-Length`, a body that does not begin as the last coding's output begins (gzip's
    /// magic number, deflate's zlib header; Brotli has none, so a Brotli response without
    /// `Content-Length` counts as decoded). A coding the transport does not decode leaves the
    /// response as it is: the body is still encoded and the fields describe it.
    package static func describing(
        _ body: Data, in response: HTTPResponse, to request: HTTPRequest, decoding codings: Set<String>,
        layers: Int = .max
    ) -> HTTPResponse {
        guard request.method != .head, response.status.code != 204, response.status.code != 304 else {
            return response
        }
        let named = response.headerFields[values: .contentEncoding]
            .flatMap(DirectiveParser.fieldNames)
            .filter { $0 != "identity" }
        guard let last = named.last, named.count <= layers, named.allSatisfy(codings.contains) else {
            return response
        }
        let decoded: Bool
        if let announced = response.headerFields[.contentLength].flatMap({ Int($0) }) {
            decoded = announced != body.count
        } else {
            decoded = !begins(body, asOutputOf: last)
        }
        guard decoded else { return response }
        var response = response
        response.headerFields[.contentEncoding] = nil
        response.headerFields[.contentLength] = String(body.count)
        return response
    }

    /// Whether `body` begins as `coding`'s output does.
    private static func begins(_ body: Data, asOutputOf coding: String) -> Bool {
        let bytes = Array(body.prefix(2))
        guard bytes.count == 2 else { return false }
        switch coding {
        case "gzip", "x-gzip":
            return bytes[0] == 0x1F && bytes[1] == 0x8B
        case "deflate":
            // A zlib header (RFC 1950): method 8, a window of at most 32 KiB (CINFO 7), and the
            // two bytes a multiple of 31. Decoded text can begin so too ("x^", "Hj"): without
            // `Content-Length` such a body is taken for still encoded, and keeps its field.
            return bytes[0] & 0x0F == 8 && bytes[0] >> 4 <= 7 && (UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 31 == 0
        default:
            return false
        }
    }
}
