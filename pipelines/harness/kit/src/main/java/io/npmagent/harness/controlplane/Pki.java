package io.npmagent.harness.controlplane;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The certificates a control plane needs, written as PEM files into one directory: a CA, the API
 * server's serving certificate (loopback and the in-cluster names), client certificates for the
 * identities that log in with one (the admin in {@code system:masters}, the controller manager,
 * kube-proxy), and the service-account signing key. RSA 2048 keys in PKCS#1 PEM: the one form that Go,
 * client-java and fabric8 all read (client-java fails on SEC1 EC keys without the public part, fabric8
 * on PKCS#8 EC keys). Made once per cluster, by the JDK's generator and BouncyCastle (which
 * client-java itself uses to read keys), never by a shell.
 */
final class Pki {
    private static final Duration VALID = Duration.ofDays(365);
    private final Path dir;
    private final KeyPair caKey;
    private final X509Certificate ca;
    private final SecureRandom random = new SecureRandom();

    private Pki(Path dir, KeyPair caKey, X509Certificate ca) {
        this.dir = dir;
        this.caKey = caKey;
        this.ca = ca;
    }

    /** A new CA in {@code dir} ({@code ca.crt}); the other files come from the methods below. */
    static Pki create(Path dir) throws IOException {
        Files.createDirectories(dir);
        KeyPair key = keyPair();
        X500Name name = name("npm-agent-cluster-ca", null);
        try {
            JcaX509v3CertificateBuilder b = builder(name, name, key, new SecureRandom());
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign | KeyUsage.digitalSignature));
            X509Certificate ca = sign(b, key);
            Pki pki = new Pki(dir, key, ca);
            pki.writePem("ca.crt", ca);
            return pki;
        } catch (IOException e) {
            throw e;
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make the cluster's CA", e);
        }
    }

    Path ca() {
        return dir.resolve("ca.crt");
    }

    /** A file this PKI wrote ({@code apiserver.crt}, {@code service-account.key}, ...). */
    Path file(String name) {
        return dir.resolve(name);
    }

    /** {@code NAME.crt} and {@code NAME.key}: a serving certificate for these DNS names and IP addresses. */
    void server(String file, String commonName, List<String> dnsNames, List<String> ips) throws IOException {
        List<GeneralName> sans = new ArrayList<>();
        dnsNames.forEach(n -> sans.add(new GeneralName(GeneralName.dNSName, n)));
        ips.forEach(ip -> sans.add(new GeneralName(GeneralName.iPAddress, ip)));
        leaf(file, name(commonName, null), KeyPurposeId.id_kp_serverAuth, sans);
    }

    /** {@code NAME.crt} and {@code NAME.key}: a client certificate; the API server reads CN as the user and O as the group. */
    void client(String file, String user, String group) throws IOException {
        leaf(file, name(user, group), KeyPurposeId.id_kp_clientAuth, List.of());
    }

    /** {@code NAME.key} and {@code NAME.pub}: the key pair that signs and checks service-account tokens. */
    void signingKey(String file) throws IOException {
        KeyPair key = keyPair();
        writeKey(file + ".key", key);
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(key.getPublic());
        }
        Files.writeString(dir.resolve(file + ".pub"), out.toString());
    }

    private void leaf(String file, X500Name subject, KeyPurposeId purpose, List<GeneralName> sans) throws IOException {
        KeyPair key = keyPair();
        try {
            JcaX509v3CertificateBuilder b = builder(new X509CertificateHolder(ca.getEncoded()).getSubject(), subject, key, random);
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
            if (!sans.isEmpty()) {
                b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans.toArray(GeneralName[]::new)));
            }
            writePem(file + ".crt", sign(b, caKey));
            writeKey(file + ".key", key);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make the certificate " + file, e);
        }
    }

    private void writePem(String file, Object object) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(object);
        }
        Files.writeString(dir.resolve(file), out.toString());
    }

    private void writeKey(String file, KeyPair key) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(key.getPrivate()); // PKCS#1 ("RSA PRIVATE KEY"): what Go, client-java and fabric8 all read
        }
        Path path = dir.resolve(file);
        Files.writeString(path, out.toString());
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-------"));
    }

    private static JcaX509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair key, SecureRandom random) {
        Instant now = Instant.now();
        return new JcaX509v3CertificateBuilder(issuer, new BigInteger(64, random).abs().add(BigInteger.ONE),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(VALID)), subject, key.getPublic());
    }

    private static X509Certificate sign(JcaX509v3CertificateBuilder b, KeyPair signer) throws OperatorCreationException, GeneralSecurityException {
        ContentSigner signer256 = new JcaContentSignerBuilder("SHA256withRSA").build(signer.getPrivate());
        return new JcaX509CertificateConverter().getCertificate(b.build(signer256));
    }

    private static X500Name name(String commonName, String organization) {
        X500NameBuilder b = new X500NameBuilder(BCStyle.INSTANCE);
        if (organization != null) {
            b.addRDN(BCStyle.O, organization);
        }
        b.addRDN(BCStyle.CN, commonName);
        return b.build();
    }

    private static KeyPair keyPair() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
            g.initialize(2048);
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new UncheckedIOException(new IOException("no RSA in this JDK", e));
        }
    }
}
