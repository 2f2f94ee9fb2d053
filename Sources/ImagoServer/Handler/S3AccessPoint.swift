import Foundation

/// An S3 access point, named by its ARN, that a bucket's objects are fetched through (imgproxy's
/// `IMGPROXY_S3_ACCESS_POINTS`, ``S3Sources/accessPoints``): `arn:aws:s3:REGION:ACCOUNT:accesspoint/NAME` is
/// addressed as `https://NAME-ACCOUNT.s3-accesspoint.REGION.amazonaws.com/KEY` and signed for its own region.
///
/// The `aws`, `aws-cn` (`amazonaws.com.cn`) and `aws-us-gov` partitions are known. Multi-Region access points
/// (no region in the ARN) need Signature Version 4A, which libcurl does not sign, and Outposts and Object Lambda
/// access points are addressed otherwise: their ARNs are refused. An access point's alias (`NAME-…-s3alias`) needs
/// none of this: it is used as the bucket name itself.
///
/// ```swift
/// let point = S3AccessPoint(arn: "arn:aws:s3:us-west-2:123456789012:accesspoint/photos")
/// point?.host  // "photos-123456789012.s3-accesspoint.us-west-2.amazonaws.com"
/// ```
public struct S3AccessPoint: Sendable, Hashable {
    /// The partition: `aws`, `aws-cn` or `aws-us-gov`.
    public var partition: String
    /// The region the access point is in, and its requests are signed for.
    public var region: String
    /// The 12-digit account that owns it.
    public var account: String
    /// Its name: 3 to 50 lowercase letters, digits and hyphens.
    public var name: String

    /// The access point `arn` names (`arn:PARTITION:s3:REGION:ACCOUNT:accesspoint/NAME`, or `accesspoint:NAME`);
    /// `nil` for any other text, a Multi-Region, Outposts or Object Lambda ARN, or an unknown partition.
    public init?(arn: String) {
        let parts = arn.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 6, parts[0] == "arn", parts[2] == "s3",
            ["aws", "aws-cn", "aws-us-gov"].contains(parts[1])
        else { return nil }
        let resource = parts[5]
        let name: String
        if resource.hasPrefix("accesspoint/") {
            name = String(resource.dropFirst("accesspoint/".count))
        } else if resource.hasPrefix("accesspoint:") {
            name = String(resource.dropFirst("accesspoint:".count))
        } else {
            return nil
        }
        let region = parts[3]
        let account = parts[4]
        guard !region.isEmpty, region.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }),
            account.count == 12, account.allSatisfy({ $0.isASCII && $0.isNumber }),
            (3...50).contains(name.count),
            name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }),
            name.first != "-", name.last != "-"
        else { return nil }
        self.partition = parts[1]
        self.region = region
        self.account = account
        self.name = name
    }

    /// `arn:PARTITION:s3:REGION:ACCOUNT:accesspoint/NAME`.
    public var arn: String { "arn:\(partition):s3:\(region):\(account):accesspoint/\(name)" }

    /// The host its objects are fetched from: `NAME-ACCOUNT.s3-accesspoint.REGION.amazonaws.com` (`.com.cn` in
    /// China).
    public var host: String {
        "\(name)-\(account).s3-accesspoint.\(region).amazonaws.com" + (partition == "aws-cn" ? ".cn" : "")
    }
}
