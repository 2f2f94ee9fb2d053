import Foundation
import ImagoCore
import Testing

@Suite struct AddressPolicyTests {
    @Test(arguments: [
        "0.0.0.0", "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
        "100.64.0.1", "100.127.255.254", "169.254.169.254", "169.254.0.1", "224.0.0.1", "239.255.255.250",
        "255.255.255.255", "240.0.0.1", "192.0.2.1", "198.18.0.1",
        "::", "::1", "fe80::1", "fe80::1%eth0", "[::1]", "fc00::1", "fd12:3456::1", "ff02::1", "fec0::1",
        "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", "::ffff:7f00:1", "::127.0.0.1",
        "64:ff9b::10.0.0.1", "2002:a00:1::", "2001:db8::1",
        // imgproxy 4.0.12's SSRF fixes: ISATAP interface IDs carrying a private IPv4, local-use NAT64, Teredo
        "2a00:1450::5efe:10.0.0.1", "2a00:1450::200:5efe:127.0.0.1", "2a00:1450::5efe:a9fe:a9fe",
        "64:ff9b:1::8.8.8.8", "64:ff9b:1:a00:1::", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    ])
    func nonPublicAddressesAreRecognised(_ text: String) throws {
        let address = try #require(IPAddress(text), "\(text) should parse")
        #expect(!address.isPublic)
        #expect(!AddressPolicy.publicOnly.permits(address, host: "example.com"))
        #expect(AddressPolicy.any.permits(address, host: "example.com"))
    }

    @Test(arguments: [
        "1.1.1.1", "8.8.8.8", "93.184.216.34", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1",
        "169.253.255.255", "223.255.255.255", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e",
        "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2a00:1450::5efe:8.8.8.8",
    ])
    func publicAddressesAreAllowed(_ text: String) throws {
        let address = try #require(IPAddress(text), "\(text) should parse")
        #expect(address.isPublic)
        #expect(AddressPolicy.publicOnly.permits(address, host: nil))
    }

    @Test(arguments: ["example.com", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1:2:3:4:5:6:7:8:9", "::1::", "", "01234::1"])
    func hostNamesAndMalformedTextAreNotAddresses(_ text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func parsesIPv6IntoItsBytes() throws {
        #expect(IPAddress("::1")?.bytes == [UInt8](repeating: 0, count: 15) + [1])
        #expect(IPAddress("::ffff:1.2.3.4")?.embeddedIPv4 == 0x0102_0304)
        #expect(IPAddress("1:2:3:4:5:6:7:8")?.description == "1:2:3:4:5:6:7:8")
        #expect(IPAddress("10.0.0.1") == .v4(0x0A00_0001))
    }

    @Test func allowListsOpenTrustedHostsAndNetworks() throws {
        let privateAddress = try #require(IPAddress("10.1.2.3"))
        let network = try #require(IPNetwork("10.1.0.0/16"))
        let byNetwork = AddressPolicy(mode: .publicOnly, allowedNetworks: [network])
        #expect(byNetwork.permits(privateAddress, host: "anything"))
        #expect(byNetwork.permits(try #require(IPAddress("::ffff:10.1.9.9")), host: nil))  // mapped form
        #expect(!byNetwork.permits(try #require(IPAddress("10.2.0.1")), host: nil))
        let byHost = AddressPolicy(mode: .publicOnly, allowedHosts: ["Images.Private"])
        #expect(byHost.permits(privateAddress, host: "images.private"))
        #expect(!byHost.permits(privateAddress, host: "other.private"))
        #expect(!byHost.permits(privateAddress, host: nil))
        // Set after the fact, in any case or in Unicode: kept as loaders request them (lowercased, IDNA form)
        var later = AddressPolicy.publicOnly
        later.allowedHosts = ["CDN.Internal", "bücher.internal"]
        #expect(later.allowedHosts == ["cdn.internal", "xn--bcher-kva.internal"])
        #expect(later.permits(privateAddress, host: "cdn.internal"))
        #expect(later.permits(privateAddress, host: "xn--bcher-kva.internal"))
    }

    @Test func networksParseAndContain() throws {
        #expect(IPNetwork("10.0.0.0/33") == nil)
        #expect(IPNetwork("fd00::/8")?.contains(try #require(IPAddress("fd12::1"))) == true)
        #expect(IPNetwork("fd00::/8")?.contains(try #require(IPAddress("fe80::1"))) == false)
        #expect(IPNetwork("127.0.0.1")?.prefixLength == 32)
        #expect(IPNetwork("0.0.0.0/0")?.contains(try #require(IPAddress("8.8.8.8"))) == true)
    }
}
