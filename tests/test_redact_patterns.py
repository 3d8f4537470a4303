"""Every redaction rule, with its label (docs/secrets.md): each provider format by each of its
prefixes, each context rule (key = value pairs, URL passwords, auth schemes, cookies, command-line
flags, .netrc, SQL), and the look-alikes each rule must leave alone. The secrets are made up, with the
documented prefix, alphabet and length."""

from __future__ import annotations

import pytest

from harness_memory.redact import is_secret_key, redact, redact_mapping, redact_text

ALNUM = "aB3dE5fG7hJ9kL2mN4pQ6rS8tU1vW0xYz"
HEX = "0123456789abcdef"
UPPER = "ABCDEFGHJKLMNPQRSTUVWXYZ234567"


def cyc(alphabet: str, n: int, shift: int = 0) -> str:
    return "".join(alphabet[(i * 7 + shift) % len(alphabet)] for i in range(n))


PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA"
    + cyc(ALNUM, 60)
    + "\n"
    + cyc(ALNUM, 64, 3)
    + "\n-----END RSA PRIVATE KEY-----"
)

# (label, secret): each one embedded in an ordinary log line must come out as [REDACTED:label]
FORMATS = [
    ("private_key", PEM),
    ("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + cyc(ALNUM, 70) + "\n"),  # truncated: to the end
    ("anthropic_key", "sk-ant-api03-" + cyc(ALNUM, 40)),
    ("openai_key", "sk-proj-" + cyc(ALNUM, 48)),
    ("openai_key", "sk-" + cyc(ALNUM, 40)),
    ("stripe_key", "sk_live_" + cyc(ALNUM, 24)),
    ("stripe_key", "pk_test_" + cyc(ALNUM, 24)),
    ("github_token", "ghp_" + cyc(ALNUM, 36)),
    ("github_token", "gho_" + cyc(ALNUM, 36, 1)),
    ("github_token", "github_pat_" + cyc(ALNUM, 22) + "_" + cyc(ALNUM, 40, 2)),
    ("gitlab_token", "glpat-" + cyc(ALNUM, 20)),
    ("slack_token", "xoxb-1234567890-" + cyc(ALNUM, 24)),
    ("slack_webhook", "hooks.slack.com/services/T0ABCDEFG/B0ABCDEFGHI/" + cyc(ALNUM, 24)),
    ("discord_webhook", "discord.com/api/webhooks/123456789012345678/" + cyc(ALNUM, 68)),
    *[
        ("aws_access_key", prefix + cyc(UPPER, 16))
        for prefix in ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ABIA", "ACCA")
    ],
    ("google_api_key", "AIza" + cyc(ALNUM, 35)),
    ("google_oauth", "ya29." + cyc(ALNUM, 40)),
    ("google_oauth", "GOCSPX-" + cyc(ALNUM, 28)),
    ("huggingface_token", "hf_" + cyc(ALNUM, 34)),
    ("npm_token", "npm_" + cyc(ALNUM, 36)),
    ("pypi_token", "pypi-AgEIcHlwaS5vcmc" + cyc(ALNUM, 60)),
    ("sendgrid_key", "SG." + cyc(ALNUM, 22) + "." + cyc(ALNUM, 43, 5)),
    ("twilio_key", "SK" + cyc(HEX, 32)),
    ("shopify_token", "shpat_" + cyc(HEX, 32)),
    ("telegram_token", "1234567890:AA" + cyc(ALNUM, 33)),
    ("mailgun_key", "key-" + cyc(HEX, 32)),
    ("mailchimp_key", cyc(HEX, 32) + "-us12"),
    ("databricks_token", "dapi" + cyc(HEX, 32)),
    ("vault_token", "hvs." + cyc(ALNUM, 30)),
    ("vault_token", "hvb." + cyc(ALNUM, 30)),
    ("vault_token", "hvr." + cyc(ALNUM, 30)),
    ("doppler_token", "dp.pt." + cyc(ALNUM, 43)),
    ("atlassian_token", "ATATT3" + cyc(ALNUM, 120)),
    ("newrelic_key", "NRAK-" + cyc(UPPER, 27)),
    ("newrelic_key", "NRAI-" + cyc(UPPER, 27)),
    ("linear_key", "lin_api_" + cyc(ALNUM, 40)),
    ("digitalocean_token", "dop_v1_" + cyc(HEX, 64)),
    ("grafana_token", "glc_" + cyc(ALNUM, 40)),
    ("grafana_token", "glsa_" + cyc(ALNUM, 32) + "_" + cyc(HEX, 8)),
    ("postman_key", "PMAK-" + cyc(HEX, 24) + "-" + cyc(HEX, 34)),
    ("square_token", "sq0atp-" + cyc(ALNUM, 22)),
    ("square_token", "EAAA" + cyc(ALNUM, 60)),
    ("age_secret_key", "AGE-SECRET-KEY-1" + cyc(UPPER, 58)),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + cyc(ALNUM, 43)),
    ("discord_token", "MT" + cyc(ALNUM, 24) + "." + cyc(ALNUM, 6, 1) + "." + cyc(ALNUM, 38, 2)),
]


@pytest.mark.parametrize("label,secret", FORMATS, ids=[f"{k}-{s[:8]}" for k, s in FORMATS])
def test_each_provider_format_is_redacted_with_its_label(label, secret):
    line = f"deploy step 3 printed {secret} and exited"
    out, kinds = redact(line)
    assert kinds == [label]
    assert out == f"deploy step 3 printed [REDACTED:{label}] and exited" or (
        label == "private_key" and out.startswith("deploy step 3 printed [REDACTED:private_key]")
    )
    assert secret.strip().splitlines()[-1] not in out


@pytest.mark.parametrize("label,secret", FORMATS, ids=[f"{k}-{s[:8]}" for k, s in FORMATS])
def test_each_format_is_found_at_the_very_start_and_end_of_a_text(label, secret):
    out, kinds = redact(secret)
    assert kinds == [label] and out.startswith(f"[REDACTED:{label}]")


def test_a_secret_after_an_escaped_newline_of_a_json_log_is_found():
    tok = "ghp_" + cyc(ALNUM, 36)
    out, kinds = redact('{"msg": "push failed\\n' + tok + '"}')
    assert kinds == ["github_token"] and tok not in out


# (label, text, the part that must go): the context rules
CONTEXT = [
    ("secret_pair", "DB_PASSWORD=hunter22", "hunter22"),
    ("secret_pair", "export API_TOKEN=a8F3kd92LmQ", "a8F3kd92LmQ"),
    ("secret_pair", '{"client_secret": "Zx81Ka0PqL"}', "Zx81Ka0PqL"),
    ("secret_pair", '{\\"token\\": \\"Qw7ErTy5Ui\\"}', "Qw7ErTy5Ui"),
    ("secret_pair", "password = 'tr0ub4dor'", "tr0ub4dor"),
    ("secret_pair", "AccountKey=Ab12Cd34Ef56Gh78;", "Ab12Cd34Ef56Gh78"),
    ("secret_pair", 'apikey := "x9Y8z7W6v5"', "x9Y8z7W6v5"),
    ("secret_pair", ":password => 'hunter22'", "hunter22"),
    ("secret_pair", "sas_token=sv2021a8s9d8f7", "sv2021a8s9d8f7"),
    ("secret_pair", "sig=Zm9vYmFyYmF6cXV4", "Zm9vYmFyYmF6cXV4"),
    ("secret_pair", "sessionid=8f7e6d5c4b3a", "8f7e6d5c4b3a"),
    ("secret_pair", "credentials: k3yM4t3r1al", "k3yM4t3r1al"),
    ("secret_pair", "auth=Tk9wZSBub3BlIG5vcGU", "Tk9wZSBub3BlIG5vcGU"),
    ("secret_pair", "db_password=4821", "4821"),
    ("url_password", "postgres://admin:s3cretpw@db.example.com:5432/app", "s3cretpw"),
    ("url_password", "redis://:hunter22@cache:6379/0", "hunter22"),
    ("bearer", "Authorization: Bearer abc123def456ghi789", "abc123def456ghi789"),
    ("bearer", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("bearer", "Authorization: token 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"),
    ("bearer", "Authorization: Digest qwErTyUiOpAsDfGhJk", "qwErTyUiOpAsDfGhJk"),
    ("bearer", "Authorization: Bot MzA0NzEyOTk3NjMyMzYw", "MzA0NzEyOTk3NjMyMzYw"),
    ("bearer", "Authorization: OAuth ya2.Zx9Kq1Lm2Np3", "ya2.Zx9Kq1Lm2Np3"),
    ("bearer", "Authorization: SSWS 00aBcDeFgHiJkLmNoPq", "00aBcDeFgHiJkLmNoPq"),
    ("cookie", "Cookie: sessid=8f7e6d5c4b3a2918; theme=dark", "sessid=8f7e6d5c4b3a2918; theme=dark"),
    ("cookie", "Set-Cookie: sid=Zk3jH8sL2q; Path=/; HttpOnly", "sid=Zk3jH8sL2q; Path=/; HttpOnly"),
    ("cli_password", "deploy --password hunter22 --host db", "hunter22"),
    ("cli_password", "tool --client-secret=Zx81Ka0PqL run", "Zx81Ka0PqL"),
    ("cli_password", 'tool --password "correct horse" run', "correct horse"),
    ("cli_password", "tool --token 'Zx81Ka0PqL' run", "Zx81Ka0PqL"),
    ("cli_password", "mysql -u root -pS3cretPw shop", "S3cretPw"),
    ("cli_password", "mariadb -h db -p'S3cret Pw' shop", "S3cret Pw"),
    ("cli_password", "sshpass -p hunter22 ssh deploy@host", "hunter22"),
    ("cli_password", "curl -u admin:hunter22 https://api.example.com", "hunter22"),
    ("cli_password", "wget --http-user=bob:hunter22 https://example.com/f", "hunter22"),
    ("netrc_password", "machine api.example.com login bob password hunter22", "hunter22"),
    ("netrc_password", "machine api.example.com login bob password sunflower", "sunflower"),  # an entry: any word
    ("netrc_password", "default login anonymous password sunflower", "sunflower"),
    ("netrc_password", "login bob password S3cretPw", "S3cretPw"),  # no entry head: a made-up value
    ("netrc_password", "login bob password pa$$word", "pa$$word"),
    ("sql_password", "CREATE USER app IDENTIFIED BY 'hunter22';", "hunter22"),
    ("sql_password", 'alter user app identified by "hunter22"', "hunter22"),
]


@pytest.mark.parametrize("label,text,secret", CONTEXT, ids=[c[1][:30] for c in CONTEXT])
def test_each_context_rule_is_redacted_with_its_label(label, text, secret):
    out, kinds = redact(text)
    assert label in kinds, (out, kinds)
    assert secret not in out and f"[REDACTED:{label}]" in out
    assert out == text.replace(secret, f"[REDACTED:{kinds[0]}]", 1) or len(kinds) > 1


LEFT_ALONE = [
    "max_tokens=4096",
    "author=Jane",
    "token = lexer.next()",
    "Basic authentication failed",
    "password=$DB_PASSWORD",
    "deploy --password $DEPLOY_PASSWORD --host build-7",  # a flag given a variable reference, not a value
    "mysql -u root -p$MYSQL_ROOT_PASSWORD app",
    "password=%(pw)s",
    "password=<your password>",
    "token={{ secrets.DEPLOY }}",
    "password=${DB_PASS}",
    "token=#{vault_token}",
    "password: getpass.getpass()",
    'password = os.environ["DB"]',
    "token=settings.OPENAI_API_KEY",
    "secret_key = self.secret_key",
    "password=/run/secrets/db_password",
    "token=./conf/app/token.txt",
    "token=oauth",
    "token=Bearer",
    "api_key=LDAP",
    "token=Abcdefgh",
    "pass=12345",
    "password=12",
    "token=ab12",
    "password=********",
    "token=xxxxxxxx",
    "password=•••••",
    "password=[REDACTED:secret_pair]",
    "Cookie: none",
    "Cookie: [REDACTED:cookie]",
    "tool --password $PW run",
    "tool --password abc run",
    "tool --password --next",
    "curl -u bob https://x",
    "Authorization: Bearer [REDACTED:bearer]",
    "Authorization: Bearer short1",
    "Authorization: Bearer Abcdefghijklmnop",
    "postgres://admin:[REDACTED:url_password]@db/app",
    "mysql -p",
    "monkey=1234567890abcdef",
    "keyboard=us",
    "tokenizer=wordpiece",
    "passenger=3",
    # prose about logins is not a .netrc entry
    "a login form; password reset mail sent",
    "after login users see password hints",
    "login alice password reset.",
]


@pytest.mark.parametrize("text", LEFT_ALONE)
def test_look_alikes_are_left_alone(text):
    assert redact(text) == (text, [])


PLACEHOLDERS = [
    "none",
    "null",
    "nil",
    "true",
    "false",
    "undefined",
    "empty",
    "redacted",
    "hidden",
    "masked",
    "secret",
    "password",
    "token",
    "required",
    "optional",
    "missing",
    "invalid",
    "expired",
    "n/a",
    "na",
    "unset",
    "default",
    "changeme",
    "your_password",
    "your-password",
    "yourpassword",
    "your_token",
    "your_api_key",
    "xxx",
    "todo",
    "example",
    "string",
    "str",
    "bytes",
    "any",
    "int",
    "bool",
    "env",
    "self",
    "ok",
    "error",
    "failed",
    "valid",
]


@pytest.mark.parametrize("word", PLACEHOLDERS)
def test_a_placeholder_value_is_not_a_secret(word):
    for text in (f"password={word}", f"DB_PASSWORD: {word.upper()}", f'"api_key": "{word}"'):
        assert redact_text(text) == text
    assert redact_mapping({"password": word}) == {"password": word}


PASSWORD_KEYS = [
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "pwd",
    "pass",
    "pword",
    "pin",
    "db_password",
    "adminPasswd",
    "X_PASSWORD_VALUE",
    "userpassword",
]
TOKEN_KEYS = [
    "secret",
    "secrets",
    "token",
    "apikey",
    "credential",
    "credentials",
    "auth",
    "authtoken",
    "accesstoken",
    "sig",
    "privatekey",
    "clientsecret",
    "secretkey",
    "accesskey",
    "sas",
    "sastoken",
    "jwt",
    "bearer",
    "cookie",
    "sessionid",
    "session_token",
    "webhook",
    "github_token",
    "refreshToken",
    "mysecret",
    "x-api-key",
    "secret_key_base",
    "token_value",
    "api_token_str",
    "token_b64",
    "secret_hex",
    "token_raw",
    "secret_val",
    "token_string",
    "secret_base64",
    "token_enc",
    "secret_plain",
    "myapikey",
]
KEY_PREFIXES = [
    "api",
    "access",
    "secret",
    "private",
    "client",
    "signing",
    "encryption",
    "master",
    "account",
    "storage",
    "app",
    "service",
    "shared",
    "subscription",
    "license",
    "webhook",
    "session",
    "auth",
    "consumer",
    "deploy",
    "ssh",
    "gpg",
    "pgp",
    "encrypt",
    "hmac",
    "jwt",
    "x",
    "admin",
    "root",
    "crypto",
    "sign",
    "cipher",
    "aes",
    "rsa",
    "instrumentation",
    "ingest",
    "management",
    "mysecret",
    "readaccess",
]
NOT_KEYS = [
    "key",
    "monkey_key",
    "primary_key",
    "foreign_key",
    "author",
    "max_tokens",
    "passenger",
    "keyboard",
    "value",
    "base",
    "token_count_total",
    "",
    "___",
]


@pytest.mark.parametrize("key", PASSWORD_KEYS)
def test_password_keys(key):
    assert is_secret_key(key) == "password"


@pytest.mark.parametrize("key", TOKEN_KEYS + [f"{p}_key" for p in KEY_PREFIXES] + [f"{p}Key" for p in KEY_PREFIXES])
def test_token_keys(key):
    assert is_secret_key(key) == "token"


@pytest.mark.parametrize("key", NOT_KEYS)
def test_keys_that_name_no_secret(key):
    assert is_secret_key(key) is None


@pytest.mark.parametrize("prefix", KEY_PREFIXES)
def test_a_prefixed_key_in_text_is_a_secret_pair(prefix):
    out, kinds = redact(f"{prefix}_key=Zx81Ka0PqLm2")
    assert kinds == ["secret_pair"] and "Zx81Ka0PqLm2" not in out


def test_an_unquoted_password_after_a_colon_runs_to_the_end_of_the_phrase_but_not_the_full_stop():
    assert redact_text("password: correct horse battery staple") == "password: [REDACTED:secret_pair]"
    assert redact_text("the password=hunter22. Next step") == "the password=[REDACTED:secret_pair]. Next step"
    assert redact_text("password=hunter22... done") == "password=[REDACTED:secret_pair]... done"
    out = redact_text("password: one two three four five six seven eight nine ten eleven")
    assert out.startswith("password: [REDACTED:secret_pair]") and out.endswith("ten eleven")
    assert "one" not in out and "eight" not in out


def test_a_token_value_needs_six_characters_and_a_password_three():
    assert redact_text("token=Ab3dE5") == "token=[REDACTED:secret_pair]"
    assert redact_text("token=Ab3dE") == "token=Ab3dE"
    assert redact_text("password=ab1") == "password=[REDACTED:secret_pair]"
    assert redact_text("password=ab") == "password=ab"
    assert redact_text("token=abcdefghij") == "token=abcdefghij"  # an ordinary word
    assert redact_text("token=abcdefghijK") == "token=[REDACTED:secret_pair]"


def test_a_number_is_a_secret_only_as_a_password_of_four_digits_or_more():
    assert redact_text("password=4821") == "password=[REDACTED:secret_pair]"
    assert redact_text("db_password=482") == "db_password=482"  # three digits: a small number
    assert redact_mapping({"pin": "4821", "pass": "4821"}) == {"pin": "[REDACTED:secret_pair]", "pass": "4821"}
    assert redact_text("pass=4821") == "pass=4821"  # a count of passes
    assert redact_text("token=48213579") == "token=48213579"


def test_case_folding_that_changes_length_keeps_the_offsets():
    text = "İİ İstanbul deploy: API_TOKEN=Zx81Ka0PqLm2 then password=hunter22"
    out, kinds = redact(text)
    assert out == "İİ İstanbul deploy: API_TOKEN=[REDACTED:secret_pair] then password=[REDACTED:secret_pair]"
    assert kinds == ["secret_pair"]


def test_overlapping_findings_become_one_redaction_labelled_by_the_first():
    tok = "ghp_" + cyc(ALNUM, 36)
    out, kinds = redact(f"GITHUB_TOKEN={tok}")
    assert out == "GITHUB_TOKEN=[REDACTED:github_token]" and kinds == ["github_token"]
    out, kinds = redact(f"a {tok} b {tok} c")
    assert out == "a [REDACTED:github_token] b [REDACTED:github_token] c" and kinds == ["github_token"]


def test_kinds_are_listed_once_each_in_order_of_appearance():
    text = f"password=hunter22 {'AKIA' + cyc(UPPER, 16)} token=Zx81Ka0PqLm2 https://u:pw12@h/x"
    out, kinds = redact(text)
    assert kinds == ["secret_pair", "aws_access_key", "url_password"]
    assert out == (
        "password=[REDACTED:secret_pair] [REDACTED:aws_access_key] token=[REDACTED:secret_pair] "
        "https://u:[REDACTED:url_password]@h/x"
    )


def test_the_discord_token_needs_its_id_part_and_a_boundary():
    tok = "MT" + cyc(ALNUM, 24) + "." + cyc(ALNUM, 6, 1) + "." + cyc(ALNUM, 38, 2)
    assert redact_text(tok) == "[REDACTED:discord_token]"
    assert redact_text(f"bot {tok}") == "bot [REDACTED:discord_token]"
    assert redact_text("x" + tok) == "x" + tok  # glued to another word: not a token start
    short = "MT" + cyc(ALNUM, 10) + "." + cyc(ALNUM, 6, 1) + "." + cyc(ALNUM, 38, 2)
    assert redact_text(f"bot {short}") == f"bot {short}"
    other = "QT" + cyc(ALNUM, 24) + "." + cyc(ALNUM, 6, 1) + "." + cyc(ALNUM, 38, 2)
    assert redact_text(f"bot {other}") == f"bot {other}"  # an id part starts with M, N or O


def test_non_text_and_empty_text_pass_through():
    assert redact("") == ("", [])
    assert redact(None) == (None, [])
    assert redact_text("") == ""


def test_redact_mapping_replaces_a_secret_keys_value_whole_and_reports_kinds():
    found: list[str] = []
    obj = {
        "password": "correct horse",
        "nested": [{"api_key": "Zx81Ka0PqLm2"}, "token=Zx81Ka0PqLm2", 3],
        "note": "ok",
        7: "ghp_" + cyc(ALNUM, 36),
        "count": 4,
        "empty": [],
    }
    out = redact_mapping(obj, found)
    assert out == {
        "password": "[REDACTED:secret_pair]",
        "nested": [{"api_key": "[REDACTED:secret_pair]"}, "token=[REDACTED:secret_pair]", 3],
        "note": "ok",
        7: "[REDACTED:github_token]",
        "count": 4,
        "empty": [],
    }
    assert sorted(found) == ["github_token", "secret_pair", "secret_pair", "secret_pair"]
    assert obj["password"] == "correct horse"  # the input is not modified
    assert redact_mapping("token=Zx81Ka0PqLm2") == "token=[REDACTED:secret_pair]"
    assert redact_mapping(5) == 5
    assert redact_mapping({"password": "$DB_PASSWORD", "token": "none"}) == {
        "password": "$DB_PASSWORD",
        "token": "none",
    }


def test_redaction_is_idempotent_on_every_rule():
    for _, secret in FORMATS:
        once = redact_text(f"x {secret} y")
        assert redact_text(once) == once
    for _, text, _ in CONTEXT:
        once = redact_text(text)
        assert redact(once) == (once, [])


def test_edges_of_the_context_rules():
    assert is_secret_key("dbpasswd") == "password" and is_secret_key("rootpassword") == "password"
    assert redact_text("password=Xk9pLm2") == "password=[REDACTED:secret_pair]"  # X is not a template sign
    assert redact_text("tool --password abcd run") == "tool --password [REDACTED:cli_password] run"  # four: enough
    assert redact_text("tool --password abc run") == "tool --password abc run"
