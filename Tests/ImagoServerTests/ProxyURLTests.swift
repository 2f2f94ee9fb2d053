import Foundation
import Imago
import ImagoServer
import Testing

@Suite("imgproxy URLs: parsing and signing")
struct ProxyURLTests {
    @Test func parsesPlainSourcesWithExtensionAndOptionAliases() throws {
        let path = try ProxyPath(
            parsing: "/_/rs:fill:300:200:1/g:noea:5:6/q:70/bl:1.5/rot:270/dpr:2/plain/http://img.example/a%20b.jpg@png")
        #expect(path.isUnsigned)
        #expect(path.source.absoluteString == "http://img.example/a%20b.jpg")
        #expect(path.options.resizingType == .fill)
        #expect(path.options.width == 300 && path.options.height == 200 && path.options.enlarges)
        #expect(
            path.options.gravity == .northEast && path.options.gravityOffsetX == 5 && path.options.gravityOffsetY == 6)
        #expect(path.options.quality == 70 && path.options.blurSigma == 1.5 && path.options.rotation == 270)
        #expect(path.options.dpr == 2 && path.options.format == .png)
        #expect(path.signedPart.hasPrefix("/rs:fill:300:200:1/"))
    }

    @Test func anEmptyExtensionIsNoneAsInImgproxy() throws {
        for written in ["/_/w:9/plain/http://a.example/i.jpg@", "/_/w:9/aHR0cDovL2EuZXhhbXBsZS9pLmpwZw."] {
            let path = try ProxyPath(parsing: written)
            #expect(path.source.absoluteString == "http://a.example/i.jpg" && path.options.format == nil, "\(written)")
        }
    }

    @Test func booleansAreTheOnesImgproxyReads() throws {
        // Go's strconv.ParseBool, which imgproxy uses: 1 t T true TRUE True, 0 f F false FALSE False
        for (written, value) in ["1", "t", "T", "true", "TRUE", "True"].map({ ($0, true) })
            + ["0", "f", "F", "false", "FALSE", "False"].map({ ($0, false) })
        {
            let path = try ProxyPath(parsing: "/_/el:\(written)/plain/http://a.example/i.jpg")
            #expect(path.options.enlarges == value, "el:\(written)")
        }
        // Anything else is a 400 naming the option (imgproxy logs a warning and takes false)
        for written in ["yes", "on", "tRUE", "2", ""] {
            #expect(throws: ProxyError.self, "el:\(written)") {
                _ = try ProxyPath(parsing: "/_/el:\(written)/plain/http://a.example/i.jpg")
            }
        }
    }

    @Test func parsesLongNamesAndBase64SourcesSplitBySlashes() throws {
        let encoded = Data("https://img.example/curiosity.jpg?x=1".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let split = encoded.prefix(10) + "/" + encoded.dropFirst(10)
        let path = try ProxyPath(
            parsing:
                "/sig/resize:fit:10:20/width:30/height:40/gravity:so/quality:0/format:jpg/blur:0/rotate:-90/\(split).webp"
        )
        #expect(path.source.absoluteString == "https://img.example/curiosity.jpg?x=1")
        #expect(path.options.width == 30 && path.options.height == 40 && path.options.gravity == .south)
        #expect(path.options.quality == nil)
        // The format option wins over the extension only when given; here both: the option came first.
        #expect(path.options.format == .jpeg)
        #expect(path.options.rotation == 270)
        #expect(!path.isUnsigned)
        // Any multiple of 90 turns, as in imgproxy
        for (written, rotation) in [("450", 90), ("-450", 270), ("720", 0), ("+180", 180)] {
            #expect(try ProxyPath(parsing: "/_/rot:\(written)/\(split)").options.rotation == rotation, "rot:\(written)")
        }
    }

    @Test(arguments: [
        ("/_/xx:1/plain/http://a.example/i.jpg", "unknown option 'xx'"),
        ("/_/rs:stretch:1:1/plain/http://a.example/i.jpg", "invalid option 'rs'"),
        ("/_/w:-1/plain/http://a.example/i.jpg", "invalid option 'w'"),
        ("/_/h:abc/plain/http://a.example/i.jpg", "invalid option 'h'"),
        ("/_/g:sm:1/plain/http://a.example/i.jpg", "invalid option 'g'"),
        ("/_/q:101/plain/http://a.example/i.jpg", "invalid option 'q'"),
        ("/_/f:psd/plain/http://a.example/i.jpg", "invalid option 'f'"),
        ("/_/bl:-2/plain/http://a.example/i.jpg", "invalid option 'bl'"),
        ("/_/rot:45/plain/http://a.example/i.jpg", "invalid option 'rot'"),
        ("/_/rot:ninety/plain/http://a.example/i.jpg", "invalid option 'rot': 'ninety' is not a whole number"),
        ("/_/dpr:0/plain/http://a.example/i.jpg", "invalid option 'dpr'"),
        ("/_/w:5000/dpr:2/plain/http://a.example/i.jpg", "invalid option 'dpr'"),
        ("/_/plain/http://a.example/i.jpg@psd", "invalid option 'extension'"),
        // An unescaped '@' of the URL itself (userinfo, or in a path) is named as such, not as a bad extension
        ("/_/plain/http://user:pw@a.example/i.jpg", "invalid source URL: an '@' in a plain source"),
        ("/_/plain/http://a.example/@me/i.jpg", "invalid source URL: an '@' in a plain source"),
        ("/_/plain/http://a.example/i@2x.png", "invalid source URL: an '@' in a plain source"),
        // Two extensions are one too many, as in imgproxy ("Multiple formats are specified")
        ("/_/plain/http://a.example/i@me@webp", "invalid source URL: an '@' in a plain source"),
        ("/_/aHR0cDovL2EuZXhhbXBsZS9pLmpwZw.jpg.webp", "invalid source URL: a base64url source takes one output"),
        // A host no resolver takes is the client's mistake, named before any DNS lookup (was a 502 after one)
        ("/_/plain/http://a%2500.example/i.jpg", "invalid source URL: the host a%00.example holds %00"),
        ("/_/plain/http://a%2520b.example/i.jpg", "invalid source URL: the host a%20b.example holds %20"),
        ("/_/plain/http://a%2509.example/i.jpg", "invalid source URL: the host a%09.example holds %09"),
        ("/_/plain/http://a!b.example/i.jpg", "invalid source URL: the host a!b.example holds '!'"),
        ("/_/plain/http://a..b.example/i.jpg", "invalid source URL: the host a..b.example has an empty label"),
        ("/_/plain/http://\(String(repeating: "a", count: 64)).example/i.jpg", "invalid source URL: the host aaaa"),
        ("/_/plain/http://%5Bfe80::1%2525e%2521%5D/i.jpg", "invalid source URL: the host [fe80::1%25e%21] is not"),
        ("/_/plain/file:///etc/passwd", "invalid source URL"),
        ("/_/%%%", "invalid source URL"),
        ("/_/enc/abc", "malformed URL"),
        ("/nothing", "malformed URL"),
    ])
    func refusesBadURLsNamingTheProblem(path: String, message: String) {
        #expect {
            _ = try ProxyPath(parsing: path)
        } throws: { error in
            guard let error = error as? ProxyError else { return false }
            return error.status == 400 && error.description.hasPrefix(message)
        }
    }

    @Test func internationalHostsTakeTheirIDNAFormAsInBrowsers() throws {
        // Percent-encoded UTF-8 (what a URL encoder makes of "bücher") and Unicode as written both become xn--
        for written in ["b%25C3%25BCcher.example", "b%C3%BCcher.example"] {
            let path = try ProxyPath(parsing: "/_/plain/https://\(written):8443/a%20b.jpg?s=1@webp")
            #expect(path.source.absoluteString == "https://xn--bcher-kva.example:8443/a%20b.jpg?s=1")
            #expect(path.options.format == .webp)
        }
        // ASCII names, IPv4 and IPv6 literals pass through untouched
        for url in [
            "http://Img_1.example/x.jpg", "http://10.0.0.1:81/x.jpg", "http://[2001:db8::1]/x.jpg",
            "http://[fe80::1%25eth0]:8080/x.jpg", "http://img.example./x.jpg",
            "http://\(String(repeating: "a", count: 63)).example/x.jpg",
        ] {
            let path = try ProxyPath(parsing: "/_/plain/" + url)
            #expect(path.source.absoluteString == url)
        }
        // An allow list written in Unicode admits the IDNA host, and still refuses others
        let policy = SourcePolicy(allowedHosts: ["*.bücher.example", "img.example"])
        #expect(policy.allowedHosts == ["*.xn--bcher-kva.example", "img.example"])
        try policy.check(try ProxyPath(parsing: "/_/plain/https://cdn.b%C3%BCcher.example/a.jpg").source)
        #expect(throws: ProxyError.sourceNotAllowed(host: "xn--bcher-kva.example")) {
            try policy.check(try ProxyPath(parsing: "/_/plain/https://b%C3%BCcher.example/a.jpg").source)
        }
    }

    @Test func signaturesAreHMACSHA256InBase64URL() throws {
        // RFC 4231 test cases 2 (short key) and 6 (key longer than a block), as base64url without padding.
        let jefe = try URLSigner(key: Array("Jefe".utf8), salt: Array("what do ya ".utf8))
        #expect(jefe.signature(for: "want for nothing?") == "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM")
        let long = try URLSigner(key: [UInt8](repeating: 0xAA, count: 131), salt: [])
        #expect(
            long.signature(for: "Test Using Larger Than Block-Size Key - Hash Key First")
                == "YOQxWR7gtn8Niiaqy_W3f44LxiE3KMUUBUYEDw7jf1Q")

        let signer = try URLSigner(
            keyHex: "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881",
            saltHex: "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5")
        let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        let signature = signer.signature(for: path)
        #expect(signer.isValid(signature: signature, for: path))
        #expect(signer.isValid(signature: String(signature.prefix(11)), for: path))  // 8 bytes, as imgproxy allows
        #expect(!signer.isValid(signature: String(signature.prefix(10)), for: path))
        #expect(!signer.isValid(signature: signature, for: path + "x"))
        #expect(throws: URLSigner.Error.invalidHex(what: "key")) { try URLSigner(keyHex: "abc", saltHex: "") }
        // Key rotation: the new pair signs, both pairs verify
        let old = try URLSigner(keyHex: "0011", saltHex: "22")
        let rotated = try URLSigner(
            keysHex: ["943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881", "0011"],
            saltsHex: ["520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5", "22"])
        #expect(rotated.signature(for: path) == signature)
        #expect(rotated.isValid(signature: old.signature(for: path), for: path))
        #expect(rotated.isValid(signature: signature, for: path) && !old.isValid(signature: signature, for: path))
        #expect(throws: URLSigner.Error.pairCount(keys: 2, salts: 1)) {
            try URLSigner(keysHex: ["00", "11"], saltsHex: [""])
        }
        // imgproxy's IMGPROXY_SIGNATURE_SIZE: signatures made and accepted at exactly that many bytes, as Python's
        // hmac makes them
        var short = signer
        short.signatureSize = 4
        let four = short.signature(for: path)
        let script = """
            import base64, hashlib, hmac, sys
            key, salt, path = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), sys.argv[3].encode()
            digest = hmac.new(key, salt + path, hashlib.sha256).digest()[:4]
            print(base64.urlsafe_b64encode(digest).rstrip(b"=").decode())
            """
        let (status, independent) = try python(
            script,
            arguments: [
                "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881",
                "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5", path,
            ])
        #expect(status == 0 && four == independent && four.count == 6)
        #expect(short.isValid(signature: four, for: path))
        #expect(
            !short.isValid(signature: signature, for: path)
                && !short.isValid(signature: String(signature.prefix(11)), for: path))
        #expect(!signer.isValid(signature: four, for: path), "4 bytes only when configured")
        short.signatureSize = 99
        #expect(short.signatureSize == 32 && short.signature(for: path) == signature)
        #expect(throws: URLSigner.Error.invalidHex(what: "salt")) {
            try URLSigner(keysHex: ["00", "11"], saltsHex: ["", "x"])
        }
        #expect(throws: URLSigner.Error.emptyKey) { try URLSigner(keyHex: "", saltHex: "") }
    }
}
