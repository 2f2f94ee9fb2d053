import Foundation
import Imago

/// Loads `s3://bucket/key` sources through `remote` at the HTTP URL ``S3Sources`` gives them, and hands every
/// other URL to `remote` unchanged.
///
/// `remote` signs what needs signing (``CurlDataLoader/Configuration/awsSigning`` for ``S3Sources/signedHosts``);
/// its address policy, limits, retries and resumption apply to these loads as to any other. A source without a
/// bucket or key fails as HTTP 404 would.
package struct S3SourceLoader: DataLoading {
    /// How `s3:` URLs map to HTTP URLs.
    package let sources: S3Sources
    /// Loads the mapped URLs and every URL that is not `s3:`.
    let remote: any DataLoading

    /// A loader of `s3:` URLs as `sources` maps them, and of other URLs, through `remote`.
    package init(sources: S3Sources, remote: any DataLoading) {
        self.sources = sources
        self.remote = remote
    }

    package func load(_ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void) -> any DataLoadTask
    {
        guard request.url.scheme?.lowercased() == "s3" else { return remote.load(request, handler: handler) }
        guard let url = sources.httpURL(for: request.url) else {
            let source = request.url
            return OneShotLoadTask(handler: handler) { .failure(.statusCode(404, url: source)) }
        }
        var mapped = request
        mapped.url = url
        return remote.load(mapped, handler: handler)
    }
}
