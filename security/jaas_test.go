package security

import (
	"strings"
	"testing"
)

func TestParseJAAS(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		module  string
		flag    string
		opts    map[string]string
		entries int
		wantErr string
	}{
		{name: "plain", text: plainJAAS, module: PlainLoginModule, flag: "REQUIRED",
			opts: map[string]string{"username": "admin", "password": "admin-secret", "user_admin": "admin-secret", "user_bob": "b"}},
		{name: "unquoted values, single quotes, flag case", text: `org.apache.kafka.common.security.scram.ScramLoginModule Required username=admin password='p"w';`,
			module: ScramLoginModule, flag: "REQUIRED", opts: map[string]string{"username": "admin", "password": `p"w`}},
		{name: "escapes", text: `m required a="x\"y\\z\n\t\101\7" b="";`, module: "m", flag: "REQUIRED",
			opts: map[string]string{"a": "x\"y\\z\n\tA\a", "b": ""}},
		{name: "comments", text: "// leading\nm /* inline */ optional k=\"v\"; # is no comment character\n", wantErr: "login module name missing"},
		{name: "comments only around", text: "/* c */ m optional // to the end\n k=\"v\";", module: "m", flag: "OPTIONAL", opts: map[string]string{"k": "v"}},
		{name: "multi-line", text: "m\n  required\n  k=\"v\"\n  ;", module: "m", flag: "REQUIRED", opts: map[string]string{"k": "v"}},
		{name: "repeated key keeps the last", text: `m required k="1" k="2";`, module: "m", flag: "REQUIRED", opts: map[string]string{"k": "2"}},
		{name: "unicode in values and words", text: `m required ключ="значение";`, module: "m", flag: "REQUIRED", opts: map[string]string{"ключ": "значение"}},
		{name: "two entries", text: `a required; b optional;`, entries: 2},
		{name: "empty", text: "  ", wantErr: "Login module not specified in JAAS config"},
		{name: "no flag", text: "m", wantErr: "Login module control flag not specified in JAAS config"},
		{name: "flag is a char", text: "m ;", wantErr: "Login module control flag is not available in the JAAS config"},
		{name: "bad flag", text: "m mandatory;", wantErr: "Invalid login module control flag 'mandatory' in JAAS config"},
		{name: "no semicolon", text: `m required k="v"`, wantErr: "JAAS config entry not terminated by semi-colon"},
		{name: "no value", text: `m required k=;`, wantErr: "Value not specified for key 'k' in JAAS config"},
		{name: "no equals", text: `m required k "v";`, wantErr: "Value not specified for key 'k' in JAAS config"},
		{name: "number value", text: `m required k=123;`, wantErr: "Value not specified for key 'k' in JAAS config"},
		{name: "number key", text: `m required 1="v";`, wantErr: "option name missing"},
		{name: "unterminated quote", text: "m required k=\"v;\n", wantErr: "unterminated quoted string"},
		{name: "unterminated comment", text: `m required /* k="v";`, wantErr: "JAAS config entry not terminated by semi-colon"},
		{name: "module is a number", text: `123 required;`, wantErr: "login module name missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, err := ParseJAAS(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q (entries %+v)", err, tt.wantErr, es)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.entries != 0 {
				if len(es) != tt.entries {
					t.Fatalf("%d entries", len(es))
				}
				return
			}
			e := es[0]
			if len(es) != 1 || e.LoginModule != tt.module || e.ControlFlag != tt.flag || len(e.Options) != len(tt.opts) {
				t.Fatalf("got %+v", es)
			}
			for k, v := range tt.opts {
				if e.Options[k] != v {
					t.Errorf("%s = %q, want %q", k, e.Options[k], v)
				}
			}
		})
	}
	if _, err := ParseServerJAAS(`a required; b required;`); err == nil || err.Error() != "JAAS config property contains 2 login modules, should be 1 module" {
		t.Errorf("two modules: %v", err)
	}
}

func FuzzParseJAAS(f *testing.F) {
	for _, s := range []string{plainJAAS, `m required a="x\"y\\z\n\t\101" b='';`, "/* c */ m optional // x\n k=v;", "m required k=\"v", "-.5 - $a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		es, err := ParseJAAS(s)
		if err == nil && len(es) == 0 {
			t.Fatal("no entries and no error")
		}
	})
}
