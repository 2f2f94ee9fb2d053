import Foundation
import ImagoCore
import ImagoCurl
import ImagoTesting
import Testing

extension LoadingNetworkTests {
    /// CA bundle, pinned public keys and proxy settings reach libcurl.
    @Suite(.timeLimit(.minutes(1))) struct CurlTLSAndProxyTests {
        /// The base64 SHA-256 of the DER public key in the PEM certificate at `path` (what curl pins).
        static func publicKeyPin(ofCertificate path: String) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = [
                "-c",
                "openssl x509 -in '\(path)' -pubkey -noout | openssl pkey -pubin -outform der"
                    + " | openssl dgst -sha256 -binary | base64",
            ]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        @Test func pinnedPublicKeyIsEnforced() async throws {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("pin-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            try testBytes(1000).write(to: root.appendingPathComponent("a.jpg"))
            let nginx = try NginxServer(root: root)
            defer { nginx.stop() }
            let url = nginx.http2URL.appendingPathComponent("a.jpg")
            func loader(pins: [String]) -> CurlDataLoader {
                var configuration = CurlDataLoader.Configuration(loading: testLoaderConfiguration())
                configuration.tls.caBundlePath = nginx.certificatePath
                configuration.tls.pinnedPublicKeys = pins
                return CurlDataLoader(configuration: configuration)
            }
            // The server's own key passes
            let pin = try Self.publicKeyPin(ofCertificate: nginx.certificatePath)
            #expect(pin.count == 44)
            #expect(try await loader(pins: [pin]).data(for: DataRequest(url: url)).data == testBytes(1000))
            // another key is refused, even though the CA bundle trusts the certificate
            let other = Data(repeating: 7, count: 32).base64EncodedString()
            let refused = await Result { try await loader(pins: ["sha256//\(other)"]).data(for: DataRequest(url: url)) }
            guard case .failure(DataLoadingError.tlsRefused(_, let reason)) = refused else {
                Issue.record("expected tlsRefused, got \(refused)")
                return
            }
            #expect(reason.lowercased().contains("public key") || reason.contains("90"), "\(reason)")
        }

        @Test func minimumTLSVersionRefusesAnOlderServer() async throws {
            // Given a server that speaks TLS 1.2 only, trusted through the CA bundle
            let server = try await SelfSignedTLSServer(extraArguments: ["-tls1_2"])
            defer { server.stop() }
            let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/"))
            func loader(_ minimum: CurlDataLoader.TLSVersion) -> CurlDataLoader {
                var configuration = CurlDataLoader.Configuration(loading: testLoaderConfiguration())
                configuration.loading.contentTypeValidation = .any  // s_server -www answers with an HTML page
                configuration.tls.caBundlePath = server.certificatePath
                configuration.tls.minimumVersion = minimum
                return CurlDataLoader(configuration: configuration)
            }
            // With the default minimum (TLS 1.2) the handshake succeeds and the page arrives
            let page = try await loader(.tls1_2).data(for: DataRequest(url: url))
            #expect(String(decoding: page.data, as: UTF8.self).contains("TLSv1.2"))
            // With TLS 1.3 as the minimum the same server is refused
            let refused = await Result { try await loader(.tls1_3).data(for: DataRequest(url: url)) }
            guard case .failure(DataLoadingError.connectionFailed) = refused else {
                Issue.record("expected connectionFailed, got \(refused)")
                return
            }
        }

        @Test func proxySettingDecidesTheRoute() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.setRoute("/a", .bytes(testBytes(100), contentType: "image/png"))
            func loader(_ proxy: CurlDataLoader.ProxyPolicy) -> CurlDataLoader {
                var configuration = CurlDataLoader.Configuration(loading: testLoaderConfiguration())
                configuration.proxy = proxy
                return CurlDataLoader(configuration: configuration)
            }
            // A proxy that is not there fails the load (so the setting is used) …
            let viaDeadProxy = await Result {
                try await loader(.url("http://127.0.0.1:1")).data(for: DataRequest(url: server.url(for: "/a")))
            }
            guard case .failure(DataLoadingError.connectionFailed) = viaDeadProxy else {
                Issue.record("expected connectionFailed through the dead proxy, got \(viaDeadProxy)")
                return
            }
            #expect(server.requestCount(for: "/a") == 0)
            // … and with proxies ignored the server is reached directly
            #expect(try await loader(.none).data(for: DataRequest(url: server.url(for: "/a"))).data == testBytes(100))
        }
    }
}
