// Lists the public Throwable classes of the named JDK modules with their superclass, one "name superclass" per line,
// sorted: the data scripts/gen_failure_lexicon.py reads (scripts/data/java_throwables.txt). Run with a JDK 11+:
//   java scripts/ListJavaThrowables.java java.base java.net.http java.sql java.naming java.rmi java.xml \
//       > scripts/data/java_throwables.txt
// (committed from OpenJDK 17.0.15; classes of sun.*, jdk.*, com.sun.* and nested classes are left out)
import java.net.URI;
import java.nio.file.*;
import java.util.*;
import java.util.stream.*;

public class ListJavaThrowables {
    public static void main(String[] args) throws Exception {
        Set<String> modules = new HashSet<>(Arrays.asList(args));
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        TreeMap<String, String> out = new TreeMap<>();
        for (String mod : modules) {
            Path root = jrt.getPath("/modules", mod);
            try (Stream<Path> s = Files.walk(root)) {
                for (Path p : (Iterable<Path>) s::iterator) {
                    String f = root.relativize(p).toString();
                    if (!f.endsWith(".class") || f.equals("module-info.class")) continue;
                    String name = f.substring(0, f.length() - 6).replace('/', '.');
                    if (name.contains("$") || name.startsWith("sun.") || name.startsWith("jdk.") || name.startsWith("com.sun.")) continue;
                    Class<?> c;
                    try { c = Class.forName(name, false, ClassLoader.getSystemClassLoader()); } catch (Throwable t) { continue; }
                    if (!Throwable.class.isAssignableFrom(c) || !java.lang.reflect.Modifier.isPublic(c.getModifiers())) continue;
                    out.put(c.getName(), c.getSuperclass() == null ? "" : c.getSuperclass().getName());
                }
            }
        }
        for (Map.Entry<String, String> e : out.entrySet()) System.out.println(e.getKey() + " " + e.getValue());
    }
}
