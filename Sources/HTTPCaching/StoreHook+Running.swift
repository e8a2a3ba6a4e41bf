import Foundation
import HTTPTypes
import TierCache

// For adapters in this package that store outside the engine (`TieredURLCache`, which URLSession
// feeds through `URLCache`'s synchronous API) but must apply the same hooks in the same order.
extension StoreHook.Candidate {
    /// A candidate for storing `response` to `request`, before any hook has run.
    package init(
        storing response: HTTPResponse, body: Data, for request: HTTPRequest, storagePolicy: StoragePolicy,
        userInfo: [String: String]
    ) {
        self.request = request
        self.response = response
        self.body = body
        self.storagePolicy = storagePolicy
        self.userInfo = userInfo
    }
}

extension Array where Element == StoreHook {
    /// Runs every hook, in order, on `candidate`.
    package func run(on candidate: inout StoreHook.Candidate) {
        for hook in self { hook.apply(to: &candidate) }
    }
}
