import Foundation
import ImagoRedis
import Testing

@Suite("RedisEndpoint: redis:// and unix:// URLs")
struct RedisEndpointTests {
    @Test func parsesTCPWithPasswordAndDatabase() throws {
        let endpoint = try RedisEndpoint(url: "redis://:s3cret@10.0.0.7:6380/2")
        #expect(endpoint.address == .tcp(host: "10.0.0.7", port: 6380))
        #expect(endpoint.password == "s3cret")
        #expect(endpoint.username == nil)
        #expect(endpoint.database == 2)
        #expect(endpoint.description == "redis://10.0.0.7:6380/2")  // no password
    }

    @Test func defaultsPortAndDatabase() throws {
        let endpoint = try RedisEndpoint(url: "redis://cache")
        #expect(endpoint.address == .tcp(host: "cache", port: 6379))
        #expect(endpoint.database == 0)
        #expect(endpoint.password == nil)
    }

    @Test func parsesUnixSocketWithQuery() throws {
        let endpoint = try RedisEndpoint(url: "unix:///run/redis/redis.sock?db=3&password=pw")
        #expect(endpoint.address == .unix(path: "/run/redis/redis.sock"))
        #expect(endpoint.database == 3)
        #expect(endpoint.password == "pw")
    }

    @Test func rejectsBadURLsWithoutShowingThePassword() {
        #expect(throws: RedisCache.Error.self) { try RedisEndpoint(url: "http://x:1") }
        #expect(throws: RedisCache.Error.self) { try RedisEndpoint(url: "redis://host/notanumber") }
        #expect(throws: RedisCache.Error.self) { try RedisEndpoint(url: "unix://relative") }
        do {
            _ = try RedisEndpoint(url: "redis://:topsecret@host/x")
            Issue.record("accepted a bad database")
        } catch {
            #expect(!"\(error)".contains("topsecret"))
        }
    }
}
