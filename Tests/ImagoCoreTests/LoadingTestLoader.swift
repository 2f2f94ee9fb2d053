import ImagoCore

// The loader the shared network scenarios (LoadingCoalescingTests, LoadingFaultTests, LoadingHTTPTests,
// LoadingQueueIntegrationTests, LoadingTLSTests) run against. ImagoCurlTests links the same scenario files and
// defines these two names for CurlDataLoader, so each scenario is written once and checks both loaders.

/// The loader under test here: URLSession's.
typealias TestLoader = HTTPDataLoader

/// A loader under test with `configuration`.
func makeTestLoader(_ configuration: HTTPDataLoader.Configuration) -> TestLoader {
    HTTPDataLoader(configuration: configuration)
}
