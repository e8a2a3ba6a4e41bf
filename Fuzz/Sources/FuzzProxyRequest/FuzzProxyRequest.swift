import FuzzDriver
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import TierCache

@testable import TierCacheProxy

/// A proxy as the server runs it, over a memory tier holding one stored response, for the
/// request path without sockets (created once: its upstream client is never used here).
let proxy: CachingProxy? = {
    guard let upstream = try? CachingProxy.Upstream("http://127.0.0.1:9"),
        let memory = try? MemoryTier(capacity: 1 << 20)
    else { return nil }
    return try? CachingProxy(configuration: .init(upstream: upstream), storage: TieredCache(tiers: [memory]))
}()

/// The proxy's request path: raw bytes through the HTTP/1 decoder the server uses, then what the
/// proxy does with each request head before any I/O: the memo key, the stored-answer lookup on
/// the event loop, and the checks and rewriting of `prepare` (sizes, Host, target form, fields).
@_cdecl("FuzzProxyRequest_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        guard let proxy else { return 0 }
        let channel = EmbeddedChannel(
            handler: ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        defer { _ = try? channel.finish() }
        do {
            try channel.writeInbound(ByteBuffer(bytes: bytes(data, size)))
        } catch {
            return 0  // the decoder refused the bytes: the server answers 400
        }
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            guard case .head(let head) = part else { continue }
            _ = AnswerMemo.key(for: head, maximumHeaderBytes: proxy.configuration.maximumRequestHeaderBytes)
            _ = proxy.answerFromStorage(head)
            if let request = try? HTTPRequest(head, secure: false, splitCookie: false) {
                _ = proxy.prepare(request)
            }
        }
        return 0
    }
}
