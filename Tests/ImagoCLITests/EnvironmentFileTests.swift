import Foundation
import Testing

@testable import ImagoCLI

/// `.env` files (`imago serve --env-file`, imgproxy's `IMGPROXY_ENV_LOCAL_FILE_PATH`), read as godotenv reads them.
@Suite struct EnvironmentFileTests {
    func values(_ text: String, _ environment: [String: String] = [:]) throws -> [String: String] {
        try EnvironmentFile(parsing: text, environment: environment).values
    }

    @Test func theFormsDockerAndSystemdFilesUse() throws {
        let text = """
            # a comment, then a blank line

            PLAIN=value
            SPACED = value with spaces   # and a comment
            export EXPORTED=1
            SINGLE='a $HOME #not a comment \\n'
            DOUBLE="line one\\nline \\"two\\" \\$HOME \\\\"
            MULTI="first
            second"
            EMPTY=
            HASHED=a#b
            COLON: yes
            dotted.name=ok
            PLAIN=again
            """
        let parsed = try EnvironmentFile(parsing: text, environment: ["HOME": "/home/me"])
        let values = parsed.values
        #expect(values["PLAIN"] == "again", "a later line wins")
        #expect(values["SPACED"] == "value with spaces")
        #expect(values["EXPORTED"] == "1")
        #expect(values["SINGLE"] == "a $HOME #not a comment \\n")
        #expect(values["DOUBLE"] == "line one\nline \"two\" $HOME \\")
        #expect(values["MULTI"] == "first\nsecond")
        #expect(values["EMPTY"] == "")
        #expect(values["HASHED"] == "a#b", "a # inside a word is not a comment")
        #expect(values["COLON"] == "yes" && values["dotted.name"] == "ok")
        #expect(parsed.variables.count == 11)
    }

    @Test func variablesExpandFromEarlierLinesThenTheEnvironment() throws {
        let text = """
            ROOT=/srv
            CACHE=${ROOT}/cache
            LOGS="$ROOT/logs"
            DATA=${MISSING:-/var/data}
            USER_HOME=${HOME}
            NOTHING=$MISSING.
            PRICE=5$
            """
        let values = try values(text, ["HOME": "/home/me", "ROOT": "/ignored"])
        #expect(values["CACHE"] == "/srv/cache" && values["LOGS"] == "/srv/logs")
        #expect(values["DATA"] == "/var/data" && values["USER_HOME"] == "/home/me")
        #expect(values["NOTHING"] == "." && values["PRICE"] == "5$")
    }

    @Test func mistakesNameTheirLine() {
        let cases: [(String, Int)] = [
            ("A=1\nB='open", 2), ("A=1\n\nB=\"open\nmore", 3), ("=value", 1), ("A=1\nJUST A NAME", 2),
            ("A=${B", 1), ("A='x' trailing", 1), ("1A=x", 1), ("A=${B:x}", 1),
        ]
        for (text, line) in cases {
            #expect(throws: EnvironmentFile.Error.self, "\(text)") { try values(text) }
            do {
                _ = try values(text)
            } catch let error as EnvironmentFile.Error {
                #expect(error.line == line, "\(text): \(error)")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func expansionsThatGrowEachLineAreStoppedAtTheirBudget() throws {
        // Given a 470-byte file whose every line is its previous one 16 times (16^7 × 64 bytes = 17 GB at line 8)
        var text = "A0=" + String(repeating: "x", count: 64) + "\n"
        for k in 1...7 { text += "A\(k)=" + String(repeating: "${A\(k - 1)}", count: 16) + "\n" }
        // Then it is refused on the line that passes 8 MiB of expansions, before that much is allocated
        do {
            _ = try values(text)
            Issue.record("the file was read")
        } catch let error as EnvironmentFile.Error {
            #expect(error.line == 6 && error.reason.contains("8 MiB"), "\(error)")
        }
        // And a file under 1 MiB that expands its one large value a few times is read (5.4 MB of expansions)
        let large = "BIG=" + String(repeating: "y", count: 900_000) + "\nTHREE=\"${BIG}$BIG\"\nFOUR=${THREE}${THREE}\n"
        let read = try values(large)
        #expect(read["THREE"]?.utf8.count == 1_800_000 && read["FOUR"]?.utf8.count == 3_600_000)
    }

    @Test func imagoServeReadsItsOptionsAndCredentialsFromTheFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-env-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("imago.env")
        try """
        IMAGO_MAX_AGE=60
        IMAGO_UNSIGNED=true
        IMAGO_CACHE_DIR=\(directory.path)/cache
        AWS_REGION=eu-north-1
        IMAGO_S3=1
        """.write(to: file, atomically: true, encoding: .utf8)
        func parse(_ arguments: [String], _ environment: [String: String]) throws -> ServeCommand.Options {
            try ServeCommand.parse(
                parseArguments(arguments, options: ServeCommand.command.options), environment: environment)
        }
        let quiet = ["AWS_EC2_METADATA_DISABLED": "true", "HOME": directory.path]
        let options = try parse(["--env-file", file.path], quiet.merging(["IMAGO_MAX_AGE": "5"]) { $1 })
        #expect(options.maxAge == 60, "the file's variables are set over the process's")
        #expect(options.allowsUnsigned && options.cacheDirectory.path == directory.path + "/cache")
        #expect(options.s3?.region == "eu-north-1")
        // Named by IMAGO_ENV_FILE too; the command line still wins over both
        let named = try parse(["--max-age", "7"], quiet.merging(["IMAGO_ENV_FILE": file.path]) { $1 })
        #expect(named.maxAge == 7 && named.allowsUnsigned)
        // A file that is missing or does not parse is a usage error naming it
        #expect(throws: UsageError.self) { try parse(["--env-file", directory.path + "/none.env"], quiet) }
        try "BROKEN='".write(to: file, atomically: true, encoding: .utf8)
        do {
            _ = try parse(["--env-file", file.path], quiet)
            Issue.record("a broken file was read")
        } catch let error as UsageError {
            #expect("\(error)".contains("imago.env, line 1"), "\(error)")
        }
    }
}
