// KafkaSecurity runs Kafka 4.4's own security code for kraftd's differential
// tests (kafka_test.go), launched as a single-file source program:
//
//   jaas FILE...                      parse each file with Kafka's JaasConfig
//   cred MECH PASSWORD SALT_HEX ITERS the SCRAM credential Kafka derives
//   client MECH USER PASSWORD         Kafka's ScramSaslClient, messages as hex lines on stdin/stdout
//   pem (CHAIN_FILE KEY_FILE PASSWORD)... load inline PEM key stores with Kafka's DefaultSslEngineFactory
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslClient;

public class KafkaSecurity {
    static final HexFormat HEX = HexFormat.of();

    static String hex(String s) {
        return s == null ? "-" : HEX.formatHex(s.getBytes(StandardCharsets.UTF_8));
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "jaas" -> {
                for (int i = 1; i < args.length; i++) {
                    String text = Files.readString(Path.of(args[i]));
                    StringBuilder sb = new StringBuilder();
                    try {
                        // JaasConfig is package-private: reached by reflection.
                        Constructor<?> ctor = Class.forName("org.apache.kafka.common.security.JaasConfig").getDeclaredConstructor(String.class, String.class);
                        ctor.setAccessible(true);
                        Configuration c;
                        try {
                            c = (Configuration) ctor.newInstance("KafkaServer", text);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                        sb.append("OK");
                        for (AppConfigurationEntry e : c.getAppConfigurationEntry("KafkaServer")) {
                            String flag = e.getControlFlag().toString().replace("LoginModuleControlFlag: ", "").toUpperCase();
                            sb.append(" E ").append(hex(e.getLoginModuleName())).append(' ').append(flag);
                            TreeMap<String, Object> sorted = new TreeMap<>(Comparator.nullsFirst(Comparator.<String>naturalOrder()));
                            sorted.putAll(e.getOptions());
                            for (Map.Entry<String, ?> o : sorted.entrySet()) {
                                sb.append(' ').append(hex(o.getKey())).append('=').append(hex((String) o.getValue()));
                            }
                        }
                    } catch (Throwable t) {
                        sb = new StringBuilder("ERR ").append(hex(t.getMessage()));
                    }
                    System.out.println(sb);
                }
            }
            case "cred" -> {
                ScramFormatter f = new ScramFormatter(ScramMechanism.forMechanismName(args[1]));
                byte[] salt = HEX.parseHex(args[3]);
                byte[] salted = f.saltedPassword(args[2], salt, Integer.parseInt(args[4]));
                System.out.println(HEX.formatHex(f.storedKey(f.clientKey(salted))) + " " + HEX.formatHex(f.serverKey(salted)));
            }
            case "client" -> {
                ScramSaslClient c = new ScramSaslClient(ScramMechanism.forMechanismName(args[1]), callbacks -> {
                    for (Callback cb : callbacks) {
                        if (cb instanceof NameCallback n) n.setName(args[2]);
                        else if (cb instanceof PasswordCallback p) p.setPassword(args[3].toCharArray());
                    }
                });
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                byte[] challenge = new byte[0];
                while (true) {
                    byte[] out = c.evaluateChallenge(challenge);
                    if (c.isComplete()) {
                        System.out.println("DONE");
                        return;
                    }
                    System.out.println(HEX.formatHex(out));
                    System.out.flush();
                    String line = in.readLine();
                    if (line == null) return;
                    challenge = HEX.parseHex(line.trim());
                }
            }
            case "pem" -> {
                for (int i = 1; i + 2 < args.length; i += 3) {
                    java.util.Properties props = new java.util.Properties();
                    props.put("ssl.keystore.type", "PEM");
                    props.put("ssl.keystore.certificate.chain", Files.readString(Path.of(args[i])));
                    props.put("ssl.keystore.key", Files.readString(Path.of(args[i + 1])));
                    if (!args[i + 2].isEmpty()) props.put("ssl.key.password", args[i + 2]);
                    org.apache.kafka.common.config.ConfigDef def = new org.apache.kafka.common.config.ConfigDef().withClientSslSupport();
                    try (org.apache.kafka.common.security.ssl.DefaultSslEngineFactory f = new org.apache.kafka.common.security.ssl.DefaultSslEngineFactory()) {
                        f.configure(def.parse(props));
                        System.out.println("OK " + f.keystore().size());
                    } catch (Throwable t) {
                        StringBuilder sb = new StringBuilder("ERR " + t);
                        for (Throwable c = t.getCause(); c != null; c = c.getCause()) sb.append(" <- ").append(c);
                        System.out.println(sb.toString().replace('\n', ' '));
                    }
                }
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
    }
}
