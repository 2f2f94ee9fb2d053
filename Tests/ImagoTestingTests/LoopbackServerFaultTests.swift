import Foundation
import ImagoTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("LoopbackServer faults in the body", .timeLimit(.minutes(1)))
struct LoopbackServerFaultTests {
    @Test func chunkedBodyDecodesCompletely() async throws {
        // Given a route sending 64 KB in 1000-byte chunks
        let server = try LoopbackServer()
        defer { server.stop() }
        let payload = patternData()
        server.setRoute("/chunked", .bytes(payload).chunked(chunkSize: 1000))
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When URLSession and a raw client fetch it
        let (data, response) = try await session.data(from: server.url(for: "/chunked"))
        let raw = try RawHTTPClient(port: server.port).get("/chunked")

        // Then both get every byte, framed by chunks and not by a length
        #expect(data == payload)
        #expect(response.header("Transfer-Encoding") == "chunked" || response.header("Content-Length") == nil)
        #expect(raw.headers["transfer-encoding"] == "chunked")
        #expect(raw.headers["content-length"] == nil)
        #expect(Data(raw.body) == payload)
        #expect(await server.waitUntil { $0.completedTransfers(for: "/chunked") == 2 })
    }

    @Test func slowDripArrivesComplete() async throws {
        // Given a route dripping 20 KB at 2 KB per millisecond
        let server = try LoopbackServer()
        defer { server.stop() }
        let payload = patternData(count: 20_000)
        server.setRoute("/drip", .bytes(payload).dripping(bytes: 2000, every: .milliseconds(1)))
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When fetched
        let (data, _) = try await session.data(from: server.url(for: "/drip"))

        // Then it is complete
        #expect(data == payload)
        #expect(await server.waitUntil { $0.completedTransfers(for: "/drip") == 1 })
    }

    @Test func resetMidBodyFailsTheClient() async throws {
        // Given a route resetting the connection after 10 KB of 64 KB
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/reset", .bytes(patternData()).resetting(afterBytes: 10_000))
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When fetched, then URLSession reports an error, and a raw client sees the reset
        await #expect(throws: (any Error).self) { _ = try await session.data(from: server.url(for: "/reset")) }
        let client = try RawHTTPClient(port: server.port)
        #expect(throws: RawHTTPClient.Failure.self) { _ = try client.get("/reset") }
        #expect(server.requestCount(for: "/reset") == 2)
        #expect(server.completedTransfers(for: "/reset") == 0)
    }

    @Test func overstatedContentLengthLeavesTheClientShort() async throws {
        // Given a route declaring 2000 bytes but sending 1000, then closing
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/long", .bytes(patternData(count: 1000)).declaringContentLength(2000))
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When fetched
        let data = try? await session.data(from: server.url(for: "/long")).0
        let client = try RawHTTPClient(port: server.port)

        // Then URLSession fails or hands back fewer bytes, and a raw client gets exactly 1000 then end of stream
        #expect((data?.count ?? 0) < 2000)
        do {
            _ = try client.get("/long")
            Issue.record("a response declaring more bytes than sent must not complete")
        } catch RawHTTPClient.Failure.closedEarly(let received) {
            #expect(received.count == 1000)
        }
    }

    @Test func understatedContentLengthSendsExtraBytes() throws {
        // Given a route declaring 500 bytes but sending 1000
        let server = try LoopbackServer()
        defer { server.stop() }
        let payload = patternData(count: 1000)
        server.setRoute("/short", .bytes(payload).declaringContentLength(500))

        // When a raw client reads the response and then the rest of the stream
        let client = try RawHTTPClient(port: server.port)
        let response = try client.get("/short")

        // Then the body is the first 500 bytes and the connection is closed after the extra bytes
        #expect(Data(response.body) == payload.prefix(500))
        #expect(response.headers["connection"] == "close")
        #expect(client.isClosedByPeer())
    }

    @Test func stallMakesURLSessionTimeOutAndCountsAnAbort() async throws {
        // Given a route that stalls after 1000 bytes
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/stall", .bytes(patternData()).stalling(afterBytes: 1000))
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When fetched with a 1 s timeout (short, with slack for a loaded machine to send the request at all)
        var request = URLRequest(url: server.url(for: "/stall"))
        request.timeoutInterval = 1
        let error = await #expect(throws: URLError.self) { _ = try await session.data(for: request) }

        // Then the client times out, and the server sees the client go away
        #expect(error?.code == .timedOut)
        #expect(
            await server.waitUntil { $0.abortedTransfers(for: "/stall") == 1 },
            "requests: \(server.requestCount(for: "/stall")), connections: \(server.connectionsAccepted)")
    }

    @Test func stallLeavesARawClientWaiting() async throws {
        // Given a route that stalls after 1000 bytes and a raw client with a 300 ms receive timeout
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/stall", .bytes(patternData()).stalling(afterBytes: 1000))
        var client: RawHTTPClient? = try RawHTTPClient(port: server.port, receiveTimeout: .milliseconds(300))

        // When it reads the response
        do {
            _ = try client?.get("/stall")
            Issue.record("a stalled response must not complete")
        } catch RawHTTPClient.Failure.timedOut(let received) {
            // Then exactly 1000 body bytes arrived before the silence (the client consumed the head)
            #expect(received.count == 1000)
        }

        // And closing the client is counted as an abort, not a completion
        client = nil
        #expect(await server.waitUntil { $0.abortedTransfers(for: "/stall") == 1 })
        #expect(server.completedTransfers(for: "/stall") == 0)
    }

    @Test func endlessBodyRunsUntilTheClientCancels() async throws {
        // Given an endless route
        let server = try LoopbackServer()
        defer { server.stop() }
        // (paced at ~16 MB/s so URLSession, shared by parallel tests, is not flooded)
        server.setRoute("/endless", .endless().dripping(bytes: 16 * 1024, every: .milliseconds(1)))
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        // When a URLSession task starts, the server is sending, and the task is cancelled
        let task = session.dataTask(with: server.url(for: "/endless"))
        task.resume()
        #expect(await server.waitUntil { $0.requestCount(for: "/endless") == 1 })
        task.cancel()

        // Then the server counts the abandoned transfer and nothing is left in flight
        #expect(await server.waitUntil { $0.abortedTransfers(for: "/endless") == 1 })
        #expect(await server.waitUntil { $0.concurrentRequests == 0 })
        #expect(server.completedTransfers(for: "/endless") == 0)
    }

    @Test func endlessBodyAbortIsCountedForRawClients() async throws {
        // Given an endless route and a raw client that reads the head and some body
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/endless", .endless(pattern: Data(repeating: 1, count: 1000)))
        var client: RawHTTPClient? = try RawHTTPClient(port: server.port)
        client?.send("GET /endless HTTP/1.1\r\nHost: x\r\n\r\n")
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(recv(client?.socket ?? -1, &buffer, buffer.count, 0) > 0)

        // When the client closes
        client = nil

        // Then the server notices (send fails) and counts one abort
        #expect(await server.waitUntil { $0.abortedTransfers(for: "/endless") == 1 })
    }

    @Test func delayBeforeHeadersHoldsTheResponse() throws {
        // Given a route delaying its head by 100 ms
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/late", .text("late").delayed(by: .milliseconds(100)))

        // When fetched
        let started = ContinuousClock.now
        let response = try RawHTTPClient(port: server.port).get("/late")

        // Then it arrives, and not before the delay
        #expect(response.body == Array("late".utf8))
        #expect(ContinuousClock.now - started >= .milliseconds(100))
    }

    @Test func stopInterruptsLongDelaysAndStalls() async throws {
        // Given a request waiting on a 60 s delay and one stalled
        let server = try LoopbackServer()
        server.setRoute("/never", .text("x").delayed(by: .seconds(60)))
        server.setRoute("/stall", .bytes(patternData()).stalling(afterBytes: 10))
        let first = try RawHTTPClient(port: server.port)
        let second = try RawHTTPClient(port: server.port)
        first.send("GET /never HTTP/1.1\r\nHost: x\r\n\r\n")
        second.send("GET /stall HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await server.waitUntil { $0.concurrentRequests == 2 })

        // When the server stops, then it returns (the test would hang otherwise) and both connections close
        server.stop()
        #expect(first.isClosedByPeer())
        #expect(second.isClosedByPeer())
        #expect(server.abortedTransfers(for: "/stall") == 0)
    }
}
