import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// CMYK JPEGs without a profile are converted through the standard CMYK profile (Ghostscript's Artifex SWOP
/// profile from Debian's `libgs-common`) when it is installed, and naively only when it is not (or with
/// ``ColorPolicy/ignore``).
@Suite struct CMYKDefaultProfileTests {
    static let file = "icc/sharp-Channel_digital_image_CMYK_color.jpg"

    static func options(_ policy: ColorPolicy) -> DecodingOptions {
        var options = ColorManagementCorpusTests.options(policy)
        options.usesBlackPointCompensation = false
        return options
    }

    /// `jpeg` without its APP2 `ICC_PROFILE` segments.
    static func strippingProfile(_ jpeg: Data) -> Data {
        let bytes = [UInt8](jpeg)
        var out: [UInt8] = Array(bytes[0..<2])
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if marker == 0xDA { break }  // start of scan: the rest is entropy-coded data
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let segment = bytes[offset..<min(bytes.count, offset + 2 + length)]
            let isICC =
                marker == 0xE2 && segment.count > 16
                && Array(segment[segment.startIndex + 4..<segment.startIndex + 15]) == Array("ICC_PROFILE".utf8)
            if !isICC { out += segment }
            offset += 2 + length
        }
        out += bytes[offset...]
        return Data(out)
    }

    @Test func theStandardProfileIsInstalledAndIsCMYK() throws {
        // install-deps.sh installs libgs-common; without it the default conversion below would be naive
        let profile = try #require(ColorManagement.defaultCMYKProfile, "libgs-common's default_cmyk.icc is missing")
        #expect(profile.count > 100_000)
        #expect(ColorManagement.defaultCMYKProfile(searching: ["/nonexistent/default_cmyk.icc"]) == nil)
        // An RGB profile in its place is not taken for a CMYK one
        #expect(ColorManagement.defaultCMYKProfile(searching: ["/usr/share/color/icc/ghostscript/srgb.icc"]) == nil)
    }

    @Test func aCMYKPhotoWithoutItsProfileComesCloseToTheManagedReference() throws {
        // Given a real CMYK photo (U.S. Web Coated SWOP v2 profile) with its profile removed
        try #require(ColorManagement.defaultCMYKProfile != nil)
        let stripped = Self.strippingProfile(try corpusData(Self.file))
        #expect(stripped.count < (try corpusData(Self.file)).count - 100_000)
        let reference = try decodeReferencePNG(
            corpusURL("icc/reference/sharp-Channel_digital_image_CMYK_color.jpg.png"))
        // When it is decoded by default (through the standard SWOP profile) and ignoring colour (naively)
        let managed = try JPEGDecoder().decode(stripped, options: Self.options(.convertToSRGB))
        let naive = try JPEGDecoder().decode(stripped, options: Self.options(.ignore))
        // Then the default conversion is close to the reference made with the file's own SWOP profile, and far
        // closer than the naive one; the file carried no profile, so none is reported
        let managedError = referenceError(managed.image, reference)
        let naiveError = referenceError(naive.image, reference)
        print(
            "CMYK without profile vs its managed reference: standard profile MAE \(managedError), naive \(naiveError)")
        // (measured: MAE 0.0 and 13.3; the Artifex profile is a SWOP characterisation too)
        #expect(managedError <= 1.0)
        #expect(naiveError > 5)
        #expect(managed.sourceColorProfileDescription == nil && managed.colorProfile == nil)
    }

    @Test func corpusCMYKFilesWithoutAProfileUseTheStandardProfileUnlessIgnored() throws {
        try #require(ColorManagement.defaultCMYKProfile != nil)
        for name in ["jpg-cmyk-1", "jpg-cmyk-2"] {
            let data = try corpusData("jpeg/reference/mozilla/\(name).jpg")
            let naiveReference = try decodeReferencePNG(corpusURL("jpeg/reference/mozilla/\(name).png"))
            let ignored = try JPEGDecoder().decode(data, options: Self.options(.ignore)).image
            let converted = try JPEGDecoder().decode(data, options: Self.options(.convertToSRGB)).image
            // .ignore keeps the naive conversion the reference decoder made; the default one goes through lcms2
            #expect(referenceError(ignored, naiveReference) <= 2, "\(name)")
            #expect(converted != ignored, "\(name)")
            #expect(converted.format == .rgba8 && converted.isKnownOpaque)
        }
    }
}
