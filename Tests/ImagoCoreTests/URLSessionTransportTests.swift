import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

/// ``HTTPDataLoader`` makes its URLSession on the first load, so that the loader every
/// `ImagePipeline.Configuration()` creates by default, and that `withDefaults()` replaces, costs no URLSession.
@Suite(.timeLimit(.minutes(1))) struct URLSessionTransportTests {
    static func transport(of loader: HTTPDataLoader) throws -> URLSessionTransport {
        try #require(loader.coordinator.transport as? URLSessionTransport)
    }

    @Test func aLoaderThatNeverLoadsMakesNoSession() throws {
        // Given the default loader of a pipeline configuration, and one made directly
        let configured = try #require(ImagePipeline.Configuration().dataLoader as? HTTPDataLoader)
        let direct = HTTPDataLoader()
        // Then neither has made a URLSession
        #expect(!(try Self.transport(of: configured)).isSessionMade)
        #expect(!(try Self.transport(of: direct)).isSessionMade)
    }

    @Test func theFirstLoadMakesTheSessionAndLoads() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let body = testBytes(3000)
        server.setRoute("/a", .bytes(body, contentType: "image/png"))
        let loader = HTTPDataLoader()
        // When it loads
        let response = try await loader.data(for: DataRequest(url: server.url(for: "/a")))
        // Then the bytes arrive through the session it has now made
        #expect(response.data == body)
        #expect(try Self.transport(of: loader).isSessionMade)
    }

    @Test func aClosedTransportMakesNoSessionAndNoHandle() throws {
        let transport = URLSessionTransport(configuration: HTTPDataLoader.Configuration())
        // When it is closed before any load
        transport.close()
        // Then no session is made afterwards
        #expect(transport.session == nil)
        #expect(!transport.isSessionMade)
    }
}
