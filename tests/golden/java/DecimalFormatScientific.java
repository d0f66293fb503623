// Records how java.text.DecimalFormat (the root locale's symbols, as OpenSearch
// uses it for an aggregation's `format`) shows numbers with scientific patterns.
// Run: java DecimalFormatScientific.java > decimal_format_scientific.tsv (Java 17).
// Subnormal extremes are left out: this dtoa gives 4.9E-324 where the shortest digits are 5E-324.
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.Locale;

public class DecimalFormatScientific {
    public static void main(String[] args) {
        String[] patterns = {
            "0.###E0", "00.###E0", "##0.#####E0", "##0.##E0", "0.000E00", "0E0", "#E0",
            "0.###E0 units", "'x'0.#E0;(0.#E0)", "0.0#E0%", "###.0E0", "#,##0.##E0", "0.E0",
        };
        double[] doubles = {
            0.0, -0.0, 1.0, -2.5, 12345.0, 123456.0, 0.00123, 1234.5678, 1e300,
            0.1, 2.675, 999.99, 99999.5, 1.0E-7, 123.0, -0.000456, 1.5, 2.5, 1e21,
        };
        long[] longs = { 0L, 7L, -42L, 12345L, 1234567L, 9007199254740993L, Long.MIN_VALUE, Long.MAX_VALUE };
        DecimalFormatSymbols root = DecimalFormatSymbols.getInstance(Locale.ROOT);
        for (String p : patterns) {
            DecimalFormat f = new DecimalFormat(p, root);
            for (double d : doubles) {
                System.out.println(p + "\td\t" + Double.toString(d) + "\t" + f.format(d));
            }
            for (long l : longs) {
                System.out.println(p + "\tl\t" + l + "\t" + f.format(l));
            }
        }
    }
}
