import ArchivePublishing
import ClientFoundation
import Foundation
import TestSupport
import Testing

/// ``SigV4`` against signatures AWS published, so the signer is checked against AWS, not
/// against itself: the `get-vanilla` case of the AWS Signature Version 4 test suite
/// (aws-sig-v4-test-suite, credentials `AKIDEXAMPLE`), the IAM `ListUsers` example of the
/// AWS General Reference ("Examples of the complete Signature Version 4 signing process"),
/// and the three header-signed examples of the Amazon S3 API Reference ("Signature
/// Calculations for the Authorization Header: Transferring Payload in a Single Chunk":
/// GET Object with a Range, GET Bucket Lifecycle, GET Bucket (List Objects)).
/// botocore 1.43 computes the same five signatures.
@Suite struct SigV4Tests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var url: String
        var headers: [String: String]
        var service: String
        var credentials: SigV4.Credentials
        var date: Date
        var s3ContentHash: Bool
        var authorization: String
        var testDescription: String { name }
    }

    static let suiteKey = SigV4.Credentials(accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    static let s3Key = SigV4.Credentials(accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    static let suiteDate = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z
    static let s3Date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    static let cases: [Case] = [
        Case(
            name: "get-vanilla", url: "https://example.amazonaws.com/", headers: ["Host": "example.amazonaws.com"], service: "service",
            credentials: suiteKey, date: suiteDate, s3ContentHash: false,
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        ),
        Case(
            name: "IAM ListUsers", url: "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08",
            headers: ["Host": "iam.amazonaws.com", "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"], service: "iam",
            credentials: suiteKey, date: suiteDate, s3ContentHash: false,
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
        ),
        Case(
            name: "S3 GET Object with Range", url: "https://examplebucket.s3.amazonaws.com/test.txt",
            headers: ["Host": "examplebucket.s3.amazonaws.com", "Range": "bytes=0-9"], service: "s3", credentials: s3Key, date: s3Date,
            s3ContentHash: true,
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        ),
        Case(
            name: "S3 GET Bucket Lifecycle", url: "https://examplebucket.s3.amazonaws.com/?lifecycle",
            headers: ["Host": "examplebucket.s3.amazonaws.com"], service: "s3", credentials: s3Key, date: s3Date, s3ContentHash: true,
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"
        ),
        Case(
            name: "S3 List Objects", url: "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J",
            headers: ["Host": "examplebucket.s3.amazonaws.com"], service: "s3", credentials: s3Key, date: s3Date, s3ContentHash: true,
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"
        ),
    ]

    @Test(arguments: cases) func matchesThePublishedSignature(_ c: Case) throws {
        var headers = c.headers
        if c.s3ContentHash { headers["x-amz-content-sha256"] = Self.emptyHash }
        let signer = SigV4(credentials: c.credentials, region: "us-east-1", service: c.service)
        let url = try #require(URL(string: c.url))
        let added = signer.authorization(method: "GET", url: url, headers: headers, payloadHash: Self.emptyHash, date: c.date)
        #expect(added["authorization"] == c.authorization)
        #expect(added["x-amz-date"] == (c.service == "s3" ? "20130524T000000Z" : "20150830T123600Z"))
        #expect(added["x-amz-security-token"] == nil)
    }

    /// Temporary credentials send and sign their session token (`x-amz-security-token`).
    @Test func aSessionTokenIsSentAndSigned() throws {
        var credentials = Self.suiteKey
        credentials.sessionToken = "token-of-a-role"
        let url = try #require(URL(string: "https://example.amazonaws.com/"))
        let added = SigV4(credentials: credentials, region: "us-east-1", service: "service").authorization(
            method: "GET", url: url, headers: ["host": "example.amazonaws.com"], payloadHash: Self.emptyHash, date: Self.suiteDate)
        #expect(added["x-amz-security-token"] == "token-of-a-role")
        #expect(added["authorization"]?.contains("SignedHeaders=host;x-amz-date;x-amz-security-token,") == true)
        #expect(added["authorization"]?.hasSuffix(Self.cases[0].authorization.suffix(64)) == false)
    }

    /// Credentials and endpoints the AWS way: environment first, then the profile of the
    /// shared credentials file; `s3://BUCKET/PREFIX` parsed, bad ones refused.
    @Test func locationsFollowTheAWSConventions() throws {
        let env = ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "tok", "AWS_REGION": "eu-west-1"]
        let aws = try S3Location.resolve("s3://cdn-origin/notes/web/", endpoint: nil, region: nil, environment: env)
        #expect(aws.bucket == "cdn-origin" && aws.prefix == "notes/web" && aws.region == "eu-west-1")
        #expect(aws.credentials == SigV4.Credentials(accessKeyId: "AKID", secretAccessKey: "secret", sessionToken: "tok"))
        #expect(
            aws.url(for: "stable/v1.0.0+build.1.tar.gz")?.absoluteString
                == "https://cdn-origin.s3.eu-west-1.amazonaws.com/notes/web/stable/v1.0.0%2Bbuild.1.tar.gz")
        let local = try S3Location.resolve(
            "s3://releases", endpoint: nil, region: "us-east-1", environment: env.merging(["AWS_ENDPOINT_URL": "http://127.0.0.1:8333/"]) { $1 })
        #expect(local.url(for: "stable/manifest.json")?.absoluteString == "http://127.0.0.1:8333/releases/stable/manifest.json")

        let folder = NSTemporaryDirectory() + "sigv4-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try
            "[default]\naws_access_key_id=A\naws_secret_access_key=B\n\n[ci]\n# the CI role\naws_access_key_id = C\naws_secret_access_key = D\naws_session_token = E\n"
            .write(toFile: folder + "/credentials", atomically: true, encoding: .utf8)
        let profile = try S3Location.resolve(
            "s3://bkt/p", endpoint: nil, region: nil, environment: ["AWS_SHARED_CREDENTIALS_FILE": folder + "/credentials", "AWS_PROFILE": "ci"])
        #expect(profile.credentials == SigV4.Credentials(accessKeyId: "C", secretAccessKey: "D", sessionToken: "E") && profile.region == "us-east-1")

        for bad in ["https://b/p", "s3://", "s3://Bad_Bucket/x"] {
            #expect(throws: (any Error).self, "\(bad)") { try S3Location.resolve(bad, endpoint: nil, region: nil, environment: env) }
        }
        #expect(throws: (any Error).self) { try S3Location.resolve("s3://bkt", endpoint: "ftp://x", region: nil, environment: env) }
        #expect(throws: (any Error).self) { try S3Location.resolve("s3://bkt", endpoint: nil, region: nil, environment: ["HOME": folder + "/none"]) }
    }
}
